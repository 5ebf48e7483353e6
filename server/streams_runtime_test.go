package server

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/cri-streaming/pkg/streaming"
	remotecommandserver "k8s.io/cri-streaming/pkg/streaming/remotecommand"
	utilexec "k8s.io/utils/exec"
)

// criStreams is a runtime's streaming server made with the library
// containerd and CRI-O serve theirs with (k8s.io/cri-streaming), so that
// what it accepts and refuses is what a real runtime's does: SPDY/3.1 and
// WebSocket up to v4, nothing newer. Behind it stands a pretend runtime
// whose commands answer from their arguments.
type criStreams struct {
	srv streaming.Server
}

func newCRIStreams(t *testing.T) *criStreams {
	t.Helper()
	// Listening first and serving the handler ourselves, rather than
	// srv.Start, gives the server its URL before any request: Start writes
	// it after listening, racing with the first GetExec.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cfg := streaming.DefaultConfig
	cfg.Addr = l.Addr().String()
	cfg.BaseURL = &url.URL{Scheme: "http", Host: cfg.Addr}
	srv, err := streaming.NewServer(cfg, pretendRuntime{})
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: srv}
	go hs.Serve(l)
	t.Cleanup(func() { hs.Close() })
	return &criStreams{srv: srv}
}

func (c *criStreams) Exec(_ context.Context, r *runtimeapi.ExecRequest) (string, error) {
	resp, err := c.srv.GetExec(r)
	return resp.GetUrl(), err
}

func (c *criStreams) Attach(_ context.Context, r *runtimeapi.AttachRequest) (string, error) {
	resp, err := c.srv.GetAttach(r)
	return resp.GetUrl(), err
}

func (c *criStreams) PortForward(_ context.Context, r *runtimeapi.PortForwardRequest) (string, error) {
	resp, err := c.srv.GetPortForward(r)
	return resp.GetUrl(), err
}

func (c *criStreams) ExecSync(context.Context, string, []string, time.Duration) (*runtimeapi.ExecSyncResponse, error) {
	return nil, fmt.Errorf("not served here")
}

// exitCode is the error a runtime returns for a command that exited with
// a status other than 0.
type exitCode int

func (e exitCode) Error() string   { return "exit status " + strconv.Itoa(int(e)) }
func (e exitCode) String() string  { return e.Error() }
func (e exitCode) Exited() bool    { return true }
func (e exitCode) ExitStatus() int { return int(e) }

var _ utilexec.ExitError = exitCode(0)

// pretendRuntime runs these commands:
//   - "reply CODE": reads a line from stdin, writes "got LINE" to stdout
//     and "oops" to stderr, exits with CODE;
//   - "size": writes the first terminal size it is sent ("cols=C rows=R")
//     and, on a TTY, nothing to stderr;
//   - "hold": waits for its stdin to end, then writes "stdin ended";
//   - "quiet": neither reads nor writes for a minute.
//
// Attach copies stdin to stdout, upper-cased, until stdin ends. A port
// forward answers "port P: " and echoes what it reads.
type pretendRuntime struct{}

func (pretendRuntime) Exec(ctx context.Context, id string, cmd []string, in io.Reader, out, errw io.WriteCloser, tty bool, resize <-chan remotecommandserver.TerminalSize) error {
	switch cmd[0] {
	case "reply":
		line, _ := bufio.NewReader(in).ReadString('\n')
		fmt.Fprintf(out, "got %s", line)
		if errw != nil {
			fmt.Fprint(errw, "oops\n")
		}
		code, _ := strconv.Atoi(cmd[1])
		if code != 0 {
			return exitCode(code)
		}
		return nil
	case "size":
		select {
		case s := <-resize:
			fmt.Fprintf(out, "cols=%d rows=%d\n", s.Width, s.Height)
		case <-time.After(10 * time.Second):
			fmt.Fprint(out, "no size\n")
		}
		return nil
	case "hold":
		io.Copy(io.Discard, in)
		fmt.Fprint(out, "stdin ended\n")
		return nil
	case "quiet":
		time.Sleep(time.Minute)
		return nil
	}
	return fmt.Errorf("no such command %q", cmd[0])
}

func (pretendRuntime) Attach(ctx context.Context, id string, in io.Reader, out, errw io.WriteCloser, tty bool, resize <-chan remotecommandserver.TerminalSize) error {
	sc := bufio.NewScanner(in)
	for sc.Scan() {
		fmt.Fprintln(out, strings.ToUpper(sc.Text()))
	}
	return nil
}

func (pretendRuntime) PortForward(ctx context.Context, sandbox string, port int32, stream io.ReadWriteCloser) error {
	defer stream.Close()
	fmt.Fprintf(stream, "port %d: ", port)
	_, err := io.Copy(stream, stream)
	return err
}

// streamURL is the URL of a podline path on the test server at base.
func streamURL(t *testing.T, base, path string) *url.URL {
	t.Helper()
	u, err := url.Parse(base + path)
	if err != nil {
		t.Fatal(err)
	}
	return u
}
