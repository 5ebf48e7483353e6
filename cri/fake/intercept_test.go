package fake

import (
	"context"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

func TestConcurrentLatencyOverlaps(t *testing.T) {
	const n, latency = 50, 50 * time.Millisecond
	r := newRig(t, Options{Latency: map[string]time.Duration{"RunPodSandbox": latency}})
	start := time.Now()
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			_, err := r.rt.RunPodSandbox(r.ctx, &runtimeapi.RunPodSandboxRequest{Config: sandboxConfig("p"+strconv.Itoa(i), nil)})
			if err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	took := time.Since(start)
	if took < latency {
		t.Fatalf("%d calls took %v, less than one call's latency %v", n, took, latency)
	}
	if took > time.Second {
		t.Fatalf("%d calls of %v took %v: calls are serialized", n, latency, took)
	}
	if got := r.srv.Calls("RunPodSandbox"); got != n {
		t.Fatalf("Calls = %d, want %d", got, n)
	}
}

func TestLatencyRespectsDeadline(t *testing.T) {
	r := newRig(t, Options{DefaultLatency: 5 * time.Second})
	ctx, cancel := context.WithTimeout(r.ctx, 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := r.rt.RunPodSandbox(ctx, &runtimeapi.RunPodSandboxRequest{Config: sandboxConfig("slow", nil)})
	wantCode(t, err, codes.DeadlineExceeded)
	if took := time.Since(start); took > time.Second {
		t.Fatalf("deadline ignored: call took %v", took)
	}
	// The call gave up before acting.
	r.srv.mu.Lock()
	n := len(r.srv.sandboxes)
	r.srv.mu.Unlock()
	if n != 0 {
		t.Fatalf("%d sandboxes made by a call that timed out", n)
	}
}

func TestContainerdLikeLatency(t *testing.T) {
	lat := ContainerdLikeLatency()
	if lat["RunPodSandbox"] != 77*time.Millisecond || lat["StopPodSandbox"] != 100*time.Millisecond ||
		lat["CreateContainer"]+lat["StartContainer"] != 70*time.Millisecond {
		t.Fatalf("unexpected latencies: %v", lat)
	}
	methods := Methods()
	for name := range lat {
		if !slices.Contains(methods, name) {
			t.Fatalf("profile names %q, which is no CRI method", name)
		}
	}
	s := New(Options{Latency: lat, DefaultLatency: ContainerdLikeDefaultLatency})
	if s.methods["Version"].latency != time.Millisecond || s.methods["RunPodSandbox"].latency != 77*time.Millisecond {
		t.Fatal("latencies not applied per method")
	}
}

func TestInjectFaults(t *testing.T) {
	r := newRig(t, Options{})
	version := func() error {
		_, err := r.rt.Version(r.ctx, &runtimeapi.VersionRequest{})
		return err
	}

	r.srv.Inject("Version", codes.Unavailable, 2)
	wantCode(t, version(), codes.Unavailable)
	wantCode(t, version(), codes.Unavailable)
	wantCode(t, version(), codes.OK)

	r.srv.Inject("Version", codes.Internal, -1)
	for range 5 {
		wantCode(t, version(), codes.Internal)
	}
	// Other methods are unaffected.
	if _, err := r.rt.Status(r.ctx, &runtimeapi.StatusRequest{}); err != nil {
		t.Fatal(err)
	}
	r.srv.ClearFaults()
	wantCode(t, version(), codes.OK)

	r.srv.Inject("Version", codes.NotFound, -1)
	r.srv.Inject("Version", codes.NotFound, 0)
	wantCode(t, version(), codes.OK)

	if got := r.srv.Calls("Version"); got != 10 {
		t.Fatalf("Calls(Version) = %d, want 10 (failed calls count)", got)
	}
	if got := r.srv.Calls("NoSuchMethod"); got != 0 {
		t.Fatalf("Calls of an unknown method = %d", got)
	}
}

func TestInjectFaultInStream(t *testing.T) {
	r := newRig(t, Options{})
	r.srv.Inject("GetContainerEvents", codes.Unimplemented, 1)
	stream, err := r.rt.GetContainerEvents(r.ctx, &runtimeapi.GetEventsRequest{})
	if err == nil {
		_, err = stream.Recv()
	}
	wantCode(t, err, codes.Unimplemented)
}
