package cri

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/podline/podline/cri/fake"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

func TestNotFoundKeepsOpSubjectAndMessage(t *testing.T) {
	c, _ := dialFake(t, fake.Options{}, time.Second)
	ctx := testCtx(t)
	before := errorsNotFound.Get()

	_, err := c.ContainerStatus(ctx, "abc123")
	if !IsNotFound(err) || !errors.Is(err, ErrNotFound) || IsUnavailable(err) || IsDeadline(err) {
		t.Fatalf("ContainerStatus of unknown id: %v", err)
	}
	if !strings.HasPrefix(err.Error(), "ContainerStatus abc123: not found: rpc error: code = NotFound") ||
		!strings.Contains(err.Error(), `container "abc123" not found`) {
		t.Fatalf("message lost op, subject or runtime text: %q", err)
	}
	if status.Code(err) != codes.NotFound {
		t.Fatalf("status code no longer reachable: %s", status.Code(err))
	}
	if _, err := c.PodSandboxStatus(ctx, "nope"); !IsNotFound(err) {
		t.Fatalf("PodSandboxStatus of unknown id: %v", err)
	}
	if err := c.StartContainer(ctx, "nope"); !IsNotFound(err) {
		t.Fatalf("StartContainer of unknown id: %v", err)
	}
	if got := errorsNotFound.Get() - before; got != 3 {
		t.Fatalf("not-found counter grew by %d, want 3", got)
	}
}

func TestInjectedFaultsMapToClasses(t *testing.T) {
	c, srv := dialFake(t, fake.Options{}, time.Second)
	ctx := testCtx(t)
	f := func(code codes.Code, want error) {
		t.Helper()
		srv.Inject("StartContainer", code, 1)
		err := c.StartContainer(ctx, "x")
		if !errors.Is(err, want) {
			t.Fatalf("%s: got %v, want class %v", code, err, want)
		}
		for _, other := range []error{ErrNotFound, ErrAlreadyExists, ErrUnavailable, ErrDeadline, ErrCanceled, ErrInvalid, ErrUnimplemented, ErrUnknown} {
			if other != want && errors.Is(err, other) {
				t.Fatalf("%s: error is also of class %v", code, other)
			}
		}
	}
	f(codes.NotFound, ErrNotFound)
	f(codes.AlreadyExists, ErrAlreadyExists)
	f(codes.Unavailable, ErrUnavailable)
	f(codes.DeadlineExceeded, ErrDeadline)
	f(codes.Canceled, ErrCanceled)
	f(codes.InvalidArgument, ErrInvalid)
	f(codes.FailedPrecondition, ErrInvalid)
	f(codes.OutOfRange, ErrInvalid)
	f(codes.Unimplemented, ErrUnimplemented)
	f(codes.Internal, ErrUnknown)
	f(codes.Unknown, ErrUnknown)
	f(codes.ResourceExhausted, ErrUnknown)
}

func TestClassOfContextErrors(t *testing.T) {
	if classOf(context.DeadlineExceeded) != ErrDeadline || classOf(context.Canceled) != ErrCanceled ||
		classOf(errors.New("boom")) != ErrUnknown {
		t.Fatal("context errors outside gRPC are misclassified")
	}
}

func TestUnavailableWhenRuntimeStops(t *testing.T) {
	c, srv := dialFake(t, fake.Options{}, time.Second)
	ctx := testCtx(t)
	if _, err := c.Version(ctx); err != nil {
		t.Fatal(err)
	}
	srv.Stop()
	_, err := c.Version(ctx)
	if !IsUnavailable(err) {
		t.Fatalf("after runtime stop: %v, want unavailable", err)
	}
}

func TestDeadlineFromRequestTimeout(t *testing.T) {
	c, _ := dialFake(t, fake.Options{Latency: map[string]time.Duration{"ContainerStatus": 2 * time.Second}}, 100*time.Millisecond)
	start := time.Now()
	_, err := c.ContainerStatus(testCtx(t), "abc")
	if !IsDeadline(err) {
		t.Fatalf("got %v, want deadline", err)
	}
	if took := time.Since(start); took > time.Second {
		t.Fatalf("request timeout not applied: took %v", took)
	}
	// The caller's own cancellation is a different class.
	ctx, cancel := context.WithCancel(testCtx(t))
	cancel()
	if _, err := c.ContainerStatus(ctx, "abc"); !errors.Is(err, ErrCanceled) {
		t.Fatalf("canceled ctx: %v", err)
	}
}

// Calls that legitimately outlast the request timeout get it added to their
// own budget (StopContainer, ExecSync) or have none (PullImage, ExecSync
// without a timeout: a lifecycle hook).
func TestLongCallsGetLongerDeadlines(t *testing.T) {
	const slow = 300 * time.Millisecond
	c, _ := dialFake(t, fake.Options{Latency: map[string]time.Duration{
		"ExecSync": slow, "PullImage": slow, "StopContainer": slow,
	}}, 100*time.Millisecond)
	ctx := testCtx(t)
	sb, err := c.RunPodSandbox(ctx, podConfig("p"), "")
	if err != nil {
		t.Fatal(err)
	}
	id, err := c.CreateContainer(ctx, sb, appConfig("a"), podConfig("p"))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.StartContainer(ctx, id); err != nil {
		t.Fatal(err)
	}

	if _, err := c.ExecSync(ctx, id, []string{"true"}, 0); err != nil {
		t.Fatalf("ExecSync without timeout, bound by ctx alone: %v", err)
	}
	if _, err := c.ExecSync(ctx, id, []string{"true"}, time.Second); err != nil {
		t.Fatalf("ExecSync with 1s timeout: %v", err)
	}
	if _, err := c.PullImage(ctx, "busybox:1", nil, nil); err != nil {
		t.Fatalf("PullImage bound by request timeout: %v", err)
	}
	if err := c.StopContainer(ctx, id, 0); !IsDeadline(err) {
		t.Fatalf("StopContainer without grace: %v, want deadline", err)
	}
	if err := c.StopContainer(ctx, id, 500*time.Millisecond); err != nil {
		t.Fatalf("StopContainer with grace: %v", err)
	}
}

func TestWholeSeconds(t *testing.T) {
	f := func(d time.Duration, want int64) {
		t.Helper()
		if got := wholeSeconds(d); got != want {
			t.Fatalf("wholeSeconds(%v) = %d, want %d", d, got, want)
		}
	}
	f(-time.Second, 0)
	f(0, 0)
	f(time.Millisecond, 1)
	f(time.Second, 1)
	f(1500*time.Millisecond, 2)
	f(30*time.Second, 30)
}
