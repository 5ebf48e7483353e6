package stages

import (
	"context"
	"sync"
	"testing"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podline/podline/pleg"
)

// sandboxCalls records the sandbox stage's runtime calls.
type sandboxCalls struct {
	mu      sync.Mutex
	stopped []string
	removed []string
}

func (r *sandboxCalls) RunPodSandbox(context.Context, *runtimeapi.PodSandboxConfig, string) (string, error) {
	panic("a teardown starts no sandbox")
}

func (r *sandboxCalls) StopPodSandbox(_ context.Context, id string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.stopped = append(r.stopped, id)
	return nil
}

func (r *sandboxCalls) RemovePodSandbox(_ context.Context, id string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.removed = append(r.removed, id)
	return nil
}

func (r *sandboxCalls) PodSandboxStatus(context.Context, string) (*runtimeapi.PodSandboxStatus, error) {
	panic("a teardown asks no status")
}

func (r *sandboxCalls) counts() (stopped, removed int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.stopped), len(r.removed)
}

// A teardown's sandbox stop waits on the runtime outside the stage's
// workers: the worker hands it to the background and is free at once; the
// pass comes back to remove what the stop left.
func TestSandboxTeardownStopsInTheBackground(t *testing.T) {
	rt := &sandboxCalls{}
	cache := pleg.NewCache()
	cache.UpsertSandbox("uid-1", "", "", &pleg.Sandbox{ID: "sb-ready", State: pleg.SandboxReady})
	cache.UpsertSandbox("uid-1", "", "", &pleg.Sandbox{ID: "sb-old", State: pleg.SandboxNotReady})
	s := &SandboxStage{Runtime: rt, Cache: cache, Node: &Node{RootDir: t.TempDir(), LogsDir: t.TempDir()}}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w := &Work{UID: "uid-1", Teardown: true, Removed: true, Sync: &PodSync{}, ctx: ctx}

	out := s.Handle(w)
	if out.Async == nil || out.Err != nil {
		t.Fatalf("first step: %+v, want background work", out)
	}
	if stopped, removed := rt.counts(); stopped != 0 || removed != 0 {
		t.Fatalf("the worker called the runtime: %d stops, %d removals", stopped, removed)
	}
	if err := out.Async(ctx); err != nil {
		t.Fatal(err)
	}
	if stopped, _ := rt.counts(); stopped != 1 || rt.stopped[0] != "sb-ready" {
		t.Fatalf("stopped %v, want [sb-ready]", rt.stopped)
	}

	out = s.Handle(w)
	if out.Async != nil || out.Err != nil {
		t.Fatalf("second step: %+v, want the step done", out)
	}
	if stopped, removed := rt.counts(); stopped != 1 || removed != 2 {
		t.Fatalf("after the stop: %d stops, %d removals (%v), want 1 and both sandboxes", stopped, removed, rt.removed)
	}
	if p := cache.Get("uid-1"); p != nil && len(p.Sandboxes) != 0 {
		t.Errorf("cache still holds %d sandboxes", len(p.Sandboxes))
	}
}

// A stop waits for a slot, and gives up its wait when the pass is
// cancelled (its pod came back, or podline stops).
func TestSandboxStopWaitsForASlot(t *testing.T) {
	for range maxSandboxStops {
		sandboxStopSlots <- struct{}{}
	}
	defer func() {
		for range maxSandboxStops {
			<-sandboxStopSlots
		}
	}()
	rt := &sandboxCalls{}
	s := &SandboxStage{Runtime: rt, Cache: pleg.NewCache(), Node: &Node{}}
	ctx, cancel := context.WithCancel(context.Background())
	w := &Work{UID: "uid-2", Teardown: true, Sync: &PodSync{}, ctx: ctx}
	done := make(chan error, 1)
	go func() { done <- s.stopInBackground(w, []string{"sb"}) }()
	cancel()
	if err := <-done; err != context.Canceled {
		t.Fatalf("cancelled wait: %v, want context.Canceled", err)
	}
	if stopped, _ := rt.counts(); stopped != 0 {
		t.Fatalf("stopped without a slot: %v", rt.stopped)
	}
}
