package prober

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// Execer runs a command in a container and waits for it; podline's
// cri.Client is one. timeout is enforced by the runtime.
type Execer interface {
	ExecSync(ctx context.Context, containerID string, cmd []string, timeout time.Duration) (*runtimeapi.ExecSyncResponse, error)
}

const (
	// maxOutput caps what a command's output (or an HTTP body) may put in
	// an event, as the kubelet caps it.
	maxOutput = 10 << 10
	// execSlack lets the runtime, which kills the command at the timeout,
	// answer before our own deadline cuts the call: its answer is the
	// accurate one, ours only guards against a runtime that never answers.
	execSlack = time.Second
)

var errNoExecer = errors.New("no runtime to run the command in")

type execHandler struct {
	cmd    []string
	execer Execer
}

func (h *execHandler) run(ctx context.Context, t target, timeout time.Duration) outcome {
	if h.execer == nil {
		return outcome{verdict: errored, err: classed(errExec, errNoExecer)}
	}
	ctx, cancel := context.WithTimeout(ctx, timeout+execSlack)
	defer cancel()
	resp, err := h.execer.ExecSync(ctx, t.containerID, h.cmd, timeout)
	if err != nil {
		if timedOut(err) {
			// The kubelet's wording; a timeout is a failure, not an error.
			return outcome{verdict: failed, output: fmt.Sprintf("command %q timed out", strings.Join(h.cmd, " "))}
		}
		return outcome{verdict: errored, err: classed(errExec, err)}
	}
	out := combinedOutput(resp.GetStdout(), resp.GetStderr())
	if resp.GetExitCode() == 0 {
		return outcome{verdict: succeeded, output: out}
	}
	return outcome{verdict: failed, output: out}
}

// timedOut: our deadline, or the runtime's (a DeadlineExceeded status,
// also when wrapped, as cri.Client wraps it).
func timedOut(err error) bool {
	return errors.Is(err, context.DeadlineExceeded) || status.Code(err) == codes.DeadlineExceeded
}

// combinedOutput is stdout then stderr, as the kubelet joins them, cut to
// maxOutput.
func combinedOutput(stdout, stderr []byte) string {
	n := min(len(stdout), maxOutput)
	m := min(len(stderr), maxOutput-n)
	if m == 0 {
		return string(stdout[:n])
	}
	var b strings.Builder
	b.Grow(n + m)
	b.Write(stdout[:n])
	b.Write(stderr[:m])
	return b.String()
}
