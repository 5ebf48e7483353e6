package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	gwebsocket "github.com/gorilla/websocket"
	"k8s.io/apimachinery/pkg/util/httpstream"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/portforward"
	"k8s.io/client-go/tools/remotecommand"
	clientspdy "k8s.io/client-go/transport/spdy"
	utilexec "k8s.io/client-go/util/exec"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// Every stream protocol a kubelet takes, driven by client-go's own
// executors and dialers against podline's handler, with a runtime
// streaming server that speaks what containerd's does (SPDY, WebSocket up
// to v4) behind it.

func newStreamingNode(t *testing.T) *httptest.Server {
	ts, _ := newCountingStreamingNode(t)
	return ts
}

// newCountingStreamingNode is newStreamingNode with the number of
// requests podline is serving at the moment.
func newCountingStreamingNode(t *testing.T) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	s := &Secure{Locator: &fakeLocator{running: true}, Streamer: newCRIStreams(t), Debugging: true}
	var serving atomic.Int32
	h := s.Handler()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		serving.Add(1)
		defer serving.Add(-1)
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	return ts, &serving
}

// executors are the clients of an exec or attach: SPDY, WebSocket v4
// (relayed to the runtime) and WebSocket v5 (translated by podline).
func executors(t *testing.T, ts *httptest.Server, path string) map[string]remotecommand.Executor {
	t.Helper()
	cfg := &rest.Config{Host: ts.URL}
	u := streamURL(t, ts.URL, path)
	spdy, err := remotecommand.NewSPDYExecutor(cfg, "POST", u)
	if err != nil {
		t.Fatal(err)
	}
	v4, err := remotecommand.NewWebSocketExecutorForProtocols(cfg, "GET", u.String(), "v4.channel.k8s.io")
	if err != nil {
		t.Fatal(err)
	}
	v5, err := remotecommand.NewWebSocketExecutor(cfg, "GET", u.String())
	if err != nil {
		t.Fatal(err)
	}
	return map[string]remotecommand.Executor{"spdy": spdy, "websocket-v4": v4, "websocket-v5": v5}
}

func stream(ex remotecommand.Executor, opts remotecommand.StreamOptions) error {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	return ex.StreamWithContext(ctx, opts)
}

func TestExecOverEveryProtocol(t *testing.T) {
	ts := newStreamingNode(t)
	for name, ex := range executors(t, ts, "/exec/default/web/app?command=reply&command=7&input=1&output=1&error=1") {
		t.Run(name, func(t *testing.T) {
			var stdout, stderr strings.Builder
			err := stream(ex, remotecommand.StreamOptions{Stdin: strings.NewReader("hello\n"), Stdout: &stdout, Stderr: &stderr})
			var code utilexec.ExitError
			if !errors.As(err, &code) || code.ExitStatus() != 7 {
				t.Errorf("err %v, want exit status 7", err)
			}
			if stdout.String() != "got hello\n" || stderr.String() != "oops\n" {
				t.Errorf("stdout %q stderr %q, want %q and %q", stdout.String(), stderr.String(), "got hello\n", "oops\n")
			}
		})
	}
	for name, ex := range executors(t, ts, "/exec/default/web/app?command=reply&command=0&input=1&output=1&error=1") {
		t.Run(name+"/success", func(t *testing.T) {
			var stdout strings.Builder
			if err := stream(ex, remotecommand.StreamOptions{Stdin: strings.NewReader("x\n"), Stdout: &stdout, Stderr: io.Discard}); err != nil || stdout.String() != "got x\n" {
				t.Errorf("%q, %v: want %q and no error", stdout.String(), err, "got x\n")
			}
		})
	}
}

// The end of stdin reaches the command: v5 says it with its close
// message, SPDY by closing the stream.
func TestExecStdinEndsOverEveryProtocol(t *testing.T) {
	ts := newStreamingNode(t)
	exs := executors(t, ts, "/exec/default/web/app?command=hold&input=1&output=1")
	delete(exs, "websocket-v4") // v4 has no way to say stdin ended: the reason v5 exists
	for name, ex := range exs {
		t.Run(name, func(t *testing.T) {
			var stdout strings.Builder
			if err := stream(ex, remotecommand.StreamOptions{Stdin: strings.NewReader("some input"), Stdout: &stdout}); err != nil || stdout.String() != "stdin ended\n" {
				t.Errorf("%q, %v: want %q", stdout.String(), err, "stdin ended\n")
			}
		})
	}
}

type oneSize struct{ sent bool }

func (q *oneSize) Next() *remotecommand.TerminalSize {
	if q.sent {
		time.Sleep(time.Hour) // a terminal that never resizes again
	}
	q.sent = true
	return &remotecommand.TerminalSize{Width: 132, Height: 43}
}

func TestExecTTYResizeOverEveryProtocol(t *testing.T) {
	ts := newStreamingNode(t)
	for name, ex := range executors(t, ts, "/exec/default/web/app?command=size&input=1&output=1&tty=1") {
		t.Run(name, func(t *testing.T) {
			var stdout strings.Builder
			pr, pw := io.Pipe()
			defer pw.Close()
			err := stream(ex, remotecommand.StreamOptions{Stdin: pr, Stdout: &stdout, Tty: true, TerminalSizeQueue: &oneSize{}})
			if err != nil || stdout.String() != "cols=132 rows=43\n" {
				t.Errorf("%q, %v: want the size the client sent", stdout.String(), err)
			}
		})
	}
}

func TestAttachOverEveryProtocol(t *testing.T) {
	ts := newStreamingNode(t)
	exs := executors(t, ts, "/attach/default/web/app?input=1&output=1")
	delete(exs, "websocket-v4") // v4 cannot end stdin, so a session that reads it to the end never ends
	for name, ex := range exs {
		t.Run(name, func(t *testing.T) {
			var stdout strings.Builder
			if err := stream(ex, remotecommand.StreamOptions{Stdin: strings.NewReader("one\ntwo\n"), Stdout: &stdout}); err != nil || stdout.String() != "ONE\nTWO\n" {
				t.Errorf("%q, %v: want the lines back upper-cased", stdout.String(), err)
			}
		})
	}
}

// A v5 client that leaves ends podline's session with the runtime at
// once, even one whose command neither reads nor writes. Left open, the
// session would hold a connection to the runtime until the command ends.
func TestTranslatedSessionEndsWhenTheClientLeaves(t *testing.T) {
	ts, serving := newCountingStreamingNode(t)
	ex := executors(t, ts, "/exec/default/web/app?command=quiet&input=1&output=1")["websocket-v5"]
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	pr, pw := io.Pipe()
	defer pw.Close()
	go func() { done <- ex.StreamWithContext(ctx, remotecommand.StreamOptions{Stdin: pr, Stdout: io.Discard}) }()
	deadline := time.Now().Add(10 * time.Second)
	time.Sleep(200 * time.Millisecond)
	select {
	case err := <-done:
		t.Fatalf("the session ended before its client left: %v", err)
	default:
	}
	if serving.Load() != 1 {
		t.Fatalf("%d sessions served, want the one", serving.Load())
	}
	cancel()
	<-done
	for serving.Load() != 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := serving.Load(); n != 0 {
		t.Fatalf("%d sessions still served after the client left", n)
	}
}

// port-forward over SPDY (relayed) and SPDY tunneled in WebSocket
// (kubectl 1.31+), both through client-go's port forwarder.
func TestPortForwardOverSPDYAndTunnel(t *testing.T) {
	ts := newStreamingNode(t)
	u := streamURL(t, ts.URL, "/portForward/default/web")
	tr, up, err := clientspdy.RoundTripperFor(&rest.Config{Host: ts.URL})
	if err != nil {
		t.Fatal(err)
	}
	spdyDialer := clientspdy.NewDialer(up, &http.Client{Transport: tr}, "POST", u)
	tunnelDialer, err := portforward.NewSPDYOverWebsocketDialer(u, &rest.Config{Host: ts.URL})
	if err != nil {
		t.Fatal(err)
	}
	for name, d := range map[string]httpstream.Dialer{"spdy": spdyDialer, "tunnel": tunnelDialer} {
		t.Run(name, func(t *testing.T) {
			got := forwardOnce(t, d, "ping")
			if got != "port 8080: ping" {
				t.Errorf("through the forward: %q, want %q", got, "port 8080: ping")
			}
		})
	}
}

// forwardOnce forwards a local port to the pod's 8080 through d, sends
// msg and returns what came back.
func forwardOnce(t *testing.T, d httpstream.Dialer, msg string) string {
	t.Helper()
	stop, ready := make(chan struct{}), make(chan struct{})
	defer close(stop)
	fw, err := portforward.NewOnAddresses(d, []string{"127.0.0.1"}, []string{"0:8080"}, stop, ready, io.Discard, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() { errc <- fw.ForwardPorts() }()
	select {
	case <-ready:
	case err := <-errc:
		t.Fatalf("forward: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("forward not ready")
	}
	ports, err := fw.GetPorts()
	if err != nil {
		t.Fatal(err)
	}
	c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", ports[0].Local))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	io.WriteString(c, msg)
	want := len("port 8080: ") + len(msg)
	buf := make([]byte, want)
	n, err := io.ReadFull(c, buf)
	if err != nil {
		t.Logf("read: %v", err)
	}
	return string(buf[:n])
}

// port-forward over plain WebSocket (v4.channel.k8s.io, the ports in the
// query), as browser-based clients speak it: relayed to the runtime. Each
// port has a data and an error channel; the first frame on each names
// the port.
func TestPortForwardOverWebSocketChannels(t *testing.T) {
	ts := newStreamingNode(t)
	d := gwebsocket.Dialer{Subprotocols: []string{"v4.channel.k8s.io"}}
	ws, resp, err := d.Dial("ws"+strings.TrimPrefix(ts.URL, "http")+"/portForward/default/web?port=8080", nil)
	if err != nil {
		t.Fatalf("dial: %v (%v)", err, resp)
	}
	defer ws.Close()
	ws.SetReadDeadline(time.Now().Add(10 * time.Second))
	var data strings.Builder
	for range 2 { // the port announced on the data and the error channel
		_, msg, err := ws.ReadMessage()
		if err != nil || len(msg) != 3 || msg[1] != 8080&0xff || msg[2] != 8080>>8 {
			t.Fatalf("first frames: % x %v, want the port on each channel", msg, err)
		}
	}
	if err := ws.WriteMessage(gwebsocket.BinaryMessage, append([]byte{0}, "ping"...)); err != nil {
		t.Fatal(err)
	}
	for data.Len() < len("port 8080: ping") {
		_, msg, err := ws.ReadMessage()
		if err != nil {
			t.Fatalf("after %q: %v", data.String(), err)
		}
		if msg[0] == 0 {
			data.Write(msg[1:])
		}
	}
	if data.String() != "port 8080: ping" {
		t.Errorf("through the forward: %q", data.String())
	}
}

// deadStreamer answers every session with the URL of a streaming server
// that is gone.
type deadStreamer struct{ criStreams }

func (deadStreamer) Exec(context.Context, *runtimeapi.ExecRequest) (string, error) {
	return "http://127.0.0.1:1/exec/secret-token", nil
}

// A v5 session the runtime does not take fails with a message that keeps
// the runtime's address and the session's token to the node.
func TestTranslatedFailureHidesTheRuntime(t *testing.T) {
	s := &Secure{Locator: &fakeLocator{running: true}, Streamer: &deadStreamer{}, Debugging: true}
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	before := translateFailures.Get()
	ex := executors(t, ts, "/exec/default/web/app?command=reply&command=0&output=1")["websocket-v5"]
	err := stream(ex, remotecommand.StreamOptions{Stdout: io.Discard})
	if err == nil || strings.Contains(err.Error(), "127.0.0.1") || strings.Contains(err.Error(), "secret-token") {
		t.Fatalf("err %v: want a failure that names neither the runtime's address nor the token", err)
	}
	if translateFailures.Get() != before+1 {
		t.Errorf("failures %d → %d, want one more", before, translateFailures.Get())
	}
}
