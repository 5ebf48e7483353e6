package prober

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// execFunc is an Execer made of a function.
type execFunc func(ctx context.Context, id string, cmd []string, timeout time.Duration) (*runtimeapi.ExecSyncResponse, error)

func (f execFunc) ExecSync(ctx context.Context, id string, cmd []string, timeout time.Duration) (*runtimeapi.ExecSyncResponse, error) {
	return f(ctx, id, cmd, timeout)
}

func answer(resp *runtimeapi.ExecSyncResponse, err error) execFunc {
	return func(context.Context, string, []string, time.Duration) (*runtimeapi.ExecSyncResponse, error) {
		return resp, err
	}
}

func runExec(ex Execer, cmd ...string) outcome {
	h := &execHandler{cmd: cmd, execer: ex}
	return h.run(context.Background(), target{containerID: "c1"}, time.Second)
}

func TestExecExitCodes(t *testing.T) {
	out := runExec(answer(&runtimeapi.ExecSyncResponse{Stdout: []byte("fine\n")}, nil), "true")
	if out.verdict != succeeded || out.output != "fine\n" {
		t.Fatalf("exit 0: %+v", out)
	}
	out = runExec(answer(&runtimeapi.ExecSyncResponse{ExitCode: 1, Stdout: []byte("out "), Stderr: []byte("err")}, nil), "false")
	if out.verdict != failed || out.output != "out err" {
		t.Fatalf("exit 1: %+v, want failed with stdout then stderr", out)
	}
	out = runExec(answer(&runtimeapi.ExecSyncResponse{ExitCode: 137}, nil), "x")
	if out.verdict != failed || out.output != "" {
		t.Fatalf("exit 137: %+v", out)
	}
}

func TestExecOutputIsCapped(t *testing.T) {
	stdout := strings.Repeat("o", 8<<10)
	stderr := strings.Repeat("e", 8<<10)
	out := runExec(answer(&runtimeapi.ExecSyncResponse{ExitCode: 1, Stdout: []byte(stdout), Stderr: []byte(stderr)}, nil), "x")
	if len(out.output) != maxOutput {
		t.Fatalf("output %d bytes, want %d", len(out.output), maxOutput)
	}
	if !strings.HasPrefix(out.output, stdout) || !strings.HasSuffix(out.output, "e") {
		t.Fatal("output is not stdout followed by the start of stderr")
	}
}

func TestExecTimeoutIsAFailure(t *testing.T) {
	const want = `command "sh -c sleep 5" timed out`
	for name, err := range map[string]error{
		"runtime's DeadlineExceeded": status.Error(codes.DeadlineExceeded, "timeout 1s exceeded"),
		"wrapped as cri.Client does": fmt.Errorf("ExecSync c1: deadline exceeded: %w", status.Error(codes.DeadlineExceeded, "x")),
		"our own deadline":           context.DeadlineExceeded,
	} {
		out := runExec(answer(nil, err), "sh", "-c", "sleep 5")
		if out.verdict != failed || out.output != want {
			t.Errorf("%s: %+v, want failed %q", name, out, want)
		}
	}
}

// The runtime gets the probe's timeout; the call's deadline leaves it room
// to answer first.
func TestExecPassesTheTimeout(t *testing.T) {
	var gotTimeout time.Duration
	var left time.Duration
	ex := execFunc(func(ctx context.Context, id string, cmd []string, timeout time.Duration) (*runtimeapi.ExecSyncResponse, error) {
		gotTimeout = timeout
		d, _ := ctx.Deadline()
		left = time.Until(d)
		if id != "c7" {
			t.Errorf("container %q, want c7", id)
		}
		return &runtimeapi.ExecSyncResponse{}, nil
	})
	h := &execHandler{cmd: []string{"true"}, execer: ex}
	h.run(context.Background(), target{containerID: "c7"}, 3*time.Second)
	if gotTimeout != 3*time.Second {
		t.Fatalf("runtime timeout %v, want 3s", gotTimeout)
	}
	if left <= 3*time.Second || left > 3*time.Second+execSlack {
		t.Fatalf("call deadline in %v, want between the timeout and timeout+%v", left, execSlack)
	}
}

func TestExecRuntimeErrorIsErrored(t *testing.T) {
	out := runExec(answer(nil, status.Error(codes.NotFound, "container c1 not found")), "true")
	if out.verdict != errored || !errors.Is(out.err, errExec) || !strings.Contains(out.err.Error(), "container c1 not found") {
		t.Fatalf("%+v", out)
	}
	out = runExec(nil, "true")
	if out.verdict != errored || !errors.Is(out.err, errExec) {
		t.Fatalf("no execer: %+v", out)
	}
}
