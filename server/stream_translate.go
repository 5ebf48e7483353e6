package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	rcconst "k8s.io/apimachinery/pkg/util/remotecommand"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/remotecommand"
	clientspdy "k8s.io/client-go/transport/spdy"
	utilexec "k8s.io/client-go/util/exec"
	"k8s.io/streaming/pkg/httpstream/wsstream"
)

// WebSocket v5 (v5.channel.k8s.io) is what kubectl 1.30+ and client-go's
// WebSocket executor speak for exec and attach. It is v4 plus a message
// that closes one stream (how a client says its stdin ended). Runtimes'
// streaming servers, containerd's included, speak WebSocket up to v4
// only, so a v5 session is translated here, as the kubelet has done since
// ExtendWebSocketsToKubelet: the client's WebSocket ends at podline, and
// podline opens the session to the runtime over SPDY, copying the
// streams between the two and writing the outcome (the exit code) back
// on the error stream.

const (
	// streamIdleTimeout is how long a session may pass with no frame
	// either way: the kubelet's streamingConnectionIdleTimeout default.
	streamIdleTimeout = 4 * time.Hour
	// statusWriteTimeout bounds the last write, of the outcome, to a
	// client that stopped reading.
	statusWriteTimeout = 10 * time.Second
)

// wantsStreamClose reports a WebSocket request that offers v5, which
// podline translates; older WebSocket versions and SPDY go to the runtime
// as they are.
func wantsStreamClose(r *http.Request) bool {
	return wsstream.IsWebSocketRequestWithStreamCloseProtocol(r)
}

// v5Channels lays out the five channels of a session as the protocol
// numbers them. The error channel always opens, to carry the outcome; the
// resize channel always opens too, since a client may send sizes whether
// or not it asked for a TTY, and its end tells podline the client left.
func v5Channels(ss session) []wsstream.ChannelType {
	ch := make([]wsstream.ChannelType, 5)
	pick := func(on bool, t wsstream.ChannelType) wsstream.ChannelType {
		if on {
			return t
		}
		return wsstream.IgnoreChannel
	}
	ch[rcconst.StreamStdIn] = pick(ss.stdin, wsstream.ReadChannel)
	ch[rcconst.StreamStdOut] = pick(ss.stdout, wsstream.WriteChannel)
	ch[rcconst.StreamStdErr] = pick(ss.stderr, wsstream.WriteChannel)
	ch[rcconst.StreamErr] = wsstream.WriteChannel
	ch[rcconst.StreamResize] = wsstream.ReadChannel
	return ch
}

// translate serves one v5 WebSocket session by running it against the
// runtime's streaming server at loc over SPDY.
func (s *Secure) translate(w http.ResponseWriter, r *http.Request, what string, loc *url.URL, ss session) {
	streamsTranslated.Inc()
	conn := wsstream.NewConn(map[string]wsstream.ChannelProtocolConfig{
		rcconst.StreamProtocolV5Name: {Binary: true, Channels: v5Channels(ss)},
	})
	conn.SetIdleTimeout(streamIdleTimeout)
	// Open answers the handshake itself, a refusal included.
	if _, streams, err := conn.Open(w, r); err != nil {
		translateFailures.Inc()
		s.logger().Info("stream handshake refused", "path", r.URL.Path, "err", err)
	} else {
		defer conn.Close()
		s.runTranslated(r.Context(), what, loc, ss, streams, func(d time.Duration) { conn.SetWriteDeadline(d) })
	}
}

// runTranslated is translate after the handshake: streams are the five
// channels of v5Channels.
func (s *Secure) runTranslated(ctx context.Context, what string, loc *url.URL, ss session, streams []io.ReadWriteCloser, writeDeadline func(time.Duration)) {
	writeStatus := func(st metav1.Status) {
		b, err := json.Marshal(st)
		if err == nil {
			writeDeadline(statusWriteTimeout)
			_, err = streams[rcconst.StreamErr].Write(b)
		}
		if err != nil {
			s.logger().Debug("stream outcome not delivered", "what", what, "err", err)
		}
	}
	// An empty frame on the first stream the client reads tells it the
	// session is up, as the kubelet's translator does.
	first := rcconst.StreamErr
	switch {
	case ss.stdout:
		first = rcconst.StreamStdOut
	case ss.stderr:
		first = rcconst.StreamStdErr
	}
	if _, err := streams[first].Write(nil); err != nil {
		return
	}

	// The client leaving closes every channel, the resize channel too,
	// which a client never closes on its own: its end ends the session
	// with the runtime, whether or not the request's context says so
	// (the connection was hijacked), so that a command that neither reads
	// nor writes does not hold the runtime's session until it ends.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	sizes := make(chan remotecommand.TerminalSize)
	go func() {
		defer cancel()
		readSizes(ctx, streams[rcconst.StreamResize], sizes)
	}()

	opts := remotecommand.StreamOptions{Tty: ss.tty}
	if ss.stdin {
		opts.Stdin = streams[rcconst.StreamStdIn]
	}
	if ss.stdout {
		opts.Stdout = streams[rcconst.StreamStdOut]
	}
	if ss.stderr {
		opts.Stderr = streams[rcconst.StreamStdErr]
	}
	if ss.tty {
		opts.TerminalSizeQueue = sizeQueue{ctx: ctx, sizes: sizes}
	}
	err := runSPDY(ctx, loc, opts)
	st := outcome(err)
	if st.Reason == metav1.StatusReasonInternalError {
		// The runtime's address and token are the node's business, not
		// the caller's, as relay keeps them.
		translateFailures.Inc()
		s.logger().Warn("stream session failed", "what", what, "err", err)
		st.Message = "stream: the runtime's streaming server did not take the session"
		st.Details = nil
	}
	writeStatus(st)
}

// runSPDY runs one session against the runtime's streaming server at loc.
func runSPDY(ctx context.Context, loc *url.URL, opts remotecommand.StreamOptions) error {
	// loc is absolute, so the config only has to be empty: no credentials
	// go to the runtime's server, which trusts the one-time token in loc.
	// No proxy either: the session goes to the runtime's own address, as
	// the relay and the tunnel take it.
	rt, up, err := clientspdy.RoundTripperFor(&rest.Config{Proxy: noProxy})
	if err != nil {
		return err
	}
	// The runtime has no business sending the session elsewhere.
	ex, err := remotecommand.NewSPDYExecutorRejectRedirects(rt, up, http.MethodPost, loc)
	if err != nil {
		return err
	}
	return ex.StreamWithContext(ctx, opts)
}

// outcome is the status a v5 client reads on the error stream: success,
// the command's exit code, or what went wrong.
func outcome(err error) metav1.Status {
	var statusErr *apierrors.StatusError
	var exit utilexec.CodeExitError
	switch {
	case err == nil:
		return metav1.Status{Status: metav1.StatusSuccess}
	case errors.As(err, &exit) && exit.Exited():
		return metav1.Status{
			Status:  metav1.StatusFailure,
			Reason:  rcconst.NonZeroExitCodeReason,
			Message: fmt.Sprintf("command terminated with non-zero exit code: %v", exit),
			Details: &metav1.StatusDetails{Causes: []metav1.StatusCause{{
				Type:    rcconst.ExitCodeCauseType,
				Message: fmt.Sprint(exit.ExitStatus()),
			}}},
		}
	case errors.As(err, &statusErr):
		return statusErr.Status()
	}
	return apierrors.NewInternalError(err).Status()
}

func noProxy(*http.Request) (*url.URL, error) { return nil, nil }

// readSizes decodes the terminal sizes a client sends, one JSON object
// each, until the channel ends or ctx does.
func readSizes(ctx context.Context, r io.Reader, out chan<- remotecommand.TerminalSize) {
	dec := json.NewDecoder(r)
	for {
		var size remotecommand.TerminalSize
		if err := dec.Decode(&size); err != nil {
			return
		}
		select {
		case out <- size:
		case <-ctx.Done():
			return
		}
	}
}

// sizeQueue hands the client's terminal sizes to the SPDY session.
type sizeQueue struct {
	ctx   context.Context
	sizes <-chan remotecommand.TerminalSize
}

func (q sizeQueue) Next() *remotecommand.TerminalSize {
	select {
	case size := <-q.sizes:
		return &size
	case <-q.ctx.Done():
		return nil
	}
}
