package server

import (
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/proxy"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// Interactive streams (exec, attach, port-forward) are served by the
// runtime's own streaming server: podline asks the runtime for a one-time
// URL and relays the upgraded connection to it without looking into it,
// for every protocol the runtime speaks: SPDY/3.1 and WebSocket up to
// v4.channel.k8s.io. Two protocols the runtime does not speak are carried
// by podline, as the kubelet carries them: WebSocket v5 exec and attach
// (stream_translate.go) and SPDY tunneled in WebSocket for port-forward
// (stream_tunnel.go). The runtime's server listens on loopback only.

// flag reads a boolean query parameter as the API server sends it ("1")
// and as direct clients write it ("true").
func flag(q url.Values, names ...string) bool {
	for _, n := range names {
		switch q.Get(n) {
		case "1", "true", "True":
			return true
		}
	}
	return false
}

// streamOptions reads which streams a session wants, as the kubelet reads
// them: a TTY merges stderr into stdout.
func streamOptions(q url.Values) (stdin, stdout, stderr, tty bool, err error) {
	stdin = flag(q, v1.ExecStdinParam, "stdin")
	stdout = flag(q, v1.ExecStdoutParam, "stdout")
	stderr = flag(q, v1.ExecStderrParam, "stderr")
	tty = flag(q, v1.ExecTTYParam)
	if tty && stderr {
		stderr = false
	}
	if !stdin && !stdout && !stderr {
		return false, false, false, false, fmt.Errorf("%w: you must specify at least 1 of stdin, stdout, stderr", ErrBadRequest)
	}
	return stdin, stdout, stderr, tty, nil
}

// upgrading reports whether the request asks to switch protocols, as every
// stream must: anything else is refused before the runtime is asked.
func upgrading(w http.ResponseWriter, r *http.Request) bool {
	if headerHasToken(r.Header, "Connection", "upgrade") && r.Header.Get("Upgrade") != "" {
		return true
	}
	httpError(w, fmt.Errorf("%w: Upgrade request required: streams need SPDY/3.1 or WebSocket", ErrBadRequest))
	return false
}

// session is what exec and attach share: the streams asked for and the
// running container they go to.
type session struct {
	id                         string
	stdin, stdout, stderr, tty bool
}

// containerSession reads a session's request and finds its container;
// false means the answer was given.
func (s *Secure) containerSession(w http.ResponseWriter, r *http.Request) (session, bool) {
	var ss session
	var err error
	ss.stdin, ss.stdout, ss.stderr, ss.tty, err = streamOptions(r.URL.Query())
	if err != nil {
		httpError(w, err)
		return ss, false
	}
	if !upgrading(w, r) {
		return ss, false
	}
	ss.id, err = s.Locator.Container(r.PathValue("namespace"), r.PathValue("pod"), r.PathValue("uid"), r.PathValue("container"))
	if err != nil {
		httpError(w, err)
		return ss, false
	}
	return ss, true
}

func (s *Secure) exec(w http.ResponseWriter, r *http.Request) {
	cmd := r.URL.Query()[v1.ExecCommandParam]
	if len(cmd) == 0 {
		httpError(w, fmt.Errorf("%w: no command: give it as the %q query parameter", ErrBadRequest, v1.ExecCommandParam))
		return
	}
	ss, ok := s.containerSession(w, r)
	if !ok {
		return
	}
	loc, err := s.Streamer.Exec(r.Context(), &runtimeapi.ExecRequest{
		ContainerId: ss.id, Cmd: cmd, Tty: ss.tty, Stdin: ss.stdin, Stdout: ss.stdout, Stderr: ss.stderr})
	s.serveSession(w, r, "exec", loc, err, ss)
}

func (s *Secure) attach(w http.ResponseWriter, r *http.Request) {
	ss, ok := s.containerSession(w, r)
	if !ok {
		return
	}
	loc, err := s.Streamer.Attach(r.Context(), &runtimeapi.AttachRequest{
		ContainerId: ss.id, Tty: ss.tty, Stdin: ss.stdin, Stdout: ss.stdout, Stderr: ss.stderr})
	s.serveSession(w, r, "attach", loc, err, ss)
}

func (s *Secure) portForward(w http.ResponseWriter, r *http.Request) {
	// SPDY clients name ports per stream; WebSocket ones in the query.
	var ports []int32
	for _, p := range r.URL.Query()["port"] {
		n, err := strconv.ParseUint(p, 10, 16)
		if err != nil || n == 0 {
			httpError(w, fmt.Errorf("%w: port %q: want a number from 1 to 65535", ErrBadRequest, p))
			return
		}
		ports = append(ports, int32(n))
	}
	if !upgrading(w, r) {
		return
	}
	id, err := s.Locator.Sandbox(r.PathValue("namespace"), r.PathValue("pod"), r.PathValue("uid"))
	if err != nil {
		httpError(w, err)
		return
	}
	loc, err := s.Streamer.PortForward(r.Context(), &runtimeapi.PortForwardRequest{PodSandboxId: id, Port: ports})
	u, ok := s.location(w, "portforward", loc, err)
	if !ok {
		return
	}
	if wantsTunnel(r) {
		s.tunnel(w, r, u)
		return
	}
	s.relay(w, r, u)
}

// serveSession carries an exec or attach to the runtime's streaming
// server at loc: translated when the client speaks WebSocket v5, relayed otherwise.
func (s *Secure) serveSession(w http.ResponseWriter, r *http.Request, what, loc string, err error, ss session) {
	u, ok := s.location(w, what, loc, err)
	if !ok {
		return
	}
	if wantsStreamClose(r) {
		s.translate(w, r, what, u, ss)
		return
	}
	s.relay(w, r, u)
}

// location checks the runtime's answer to a stream request; false means
// the client was answered. From here on the session may last hours: the
// server's deadlines come off.
func (s *Secure) location(w http.ResponseWriter, what, loc string, err error) (*url.URL, bool) {
	if err != nil {
		httpError(w, fmt.Errorf("%s: %w", what, err))
		return nil, false
	}
	u, err := url.Parse(loc)
	if err != nil || !u.IsAbs() {
		httpError(w, fmt.Errorf("%s: the runtime answered with no usable URL %q", what, loc))
		return nil, false
	}
	lift(w)
	return u, true
}

// relay hands the connection to the runtime's streaming server at u.
func (s *Secure) relay(w http.ResponseWriter, r *http.Request, u *url.URL) {
	streamsRelayed.Inc()
	h := proxy.NewUpgradeAwareHandler(u, nil, false, true, relayErrors{s.logger()})
	h.ServeHTTP(w, r)
}

// relayErrors reports a relay that failed before the upgrade.
type relayErrors struct{ log *slog.Logger }

func (e relayErrors) Error(w http.ResponseWriter, r *http.Request, err error) {
	// The runtime's address is the node's business, not the caller's.
	relayFailures.Inc()
	e.log.Warn("stream relay failed", "path", r.URL.Path, "err", err)
	http.Error(w, "stream: the runtime's streaming server did not take the session", http.StatusBadGateway)
}

// run executes a command and answers with its output (the kubelet's /run).
func (s *Secure) run(w http.ResponseWriter, r *http.Request) {
	cmd := strings.Fields(r.URL.Query().Get("cmd"))
	if len(cmd) == 0 {
		httpError(w, fmt.Errorf("%w: no command: give it as the \"cmd\" query parameter", ErrBadRequest))
		return
	}
	id, err := s.Locator.Container(r.PathValue("namespace"), r.PathValue("pod"), r.PathValue("uid"), r.PathValue("container"))
	if err != nil {
		httpError(w, err)
		return
	}
	resp, err := s.Streamer.ExecSync(r.Context(), id, cmd, 0)
	if err != nil {
		httpError(w, fmt.Errorf("run: %w", err))
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Write(resp.GetStdout())
	w.Write(resp.GetStderr())
}
