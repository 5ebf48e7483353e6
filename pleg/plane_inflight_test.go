package pleg

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// gatedRuntime holds every ContainerStatus call until the gate opens, then
// says the container runs; it counts the calls under way at once.
type gatedRuntime struct {
	gate            chan struct{}
	asked, underway atomic.Int32
	most            atomic.Int32
}

func (r *gatedRuntime) ContainerStatus(ctx context.Context, id string) (*runtimeapi.ContainerStatus, error) {
	r.asked.Add(1)
	n := r.underway.Add(1)
	defer r.underway.Add(-1)
	for {
		m := r.most.Load()
		if n <= m || r.most.CompareAndSwap(m, n) {
			break
		}
	}
	select {
	case <-r.gate:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return &runtimeapi.ContainerStatus{Id: id, Metadata: &runtimeapi.ContainerMetadata{Name: "app"},
		State: runtimeapi.ContainerState_CONTAINER_RUNNING}, nil
}

func (r *gatedRuntime) PodSandboxStatus(_ context.Context, id string) (*runtimeapi.PodSandboxStatus, error) {
	return &runtimeapi.PodSandboxStatus{Id: id, State: runtimeapi.PodSandboxState_SANDBOX_READY}, nil
}

// A look that falls due while one is under way (the cgroup emptied and
// restarted the round, lost eBPF events rechecked it) waits for it: two
// inspections at once each counted a look, so a round ended after about
// half of them. The look is taken once the first ends, and the round
// runs its course.
func TestOneInspectionAtATimePerContainer(t *testing.T) {
	rt := &gatedRuntime{gate: make(chan struct{})}
	cache, n := NewCache(), newNotes()
	p := NewPlane(PlaneConfig{Runtime: rt, Cache: cache, Notify: n.notify, Cgroups: oneCgroup{}, Log: quietLog()})
	p.firstLook, p.maxLooks, p.lagLook = time.Millisecond, 3, time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go p.Run(ctx)
	cache.UpsertSandbox("u", "p", "ns", &Sandbox{ID: "sb", State: SandboxReady})
	cache.UpsertContainer("u", &Container{ID: "c1", SandboxID: "sb", Name: "app", State: ContainerRunning, StartedAt: time.Now()})
	p.ContainerStarted("u", "sb", "c1", "/kubepods/podu")
	dropped := planeExitsDropped.Get()

	p.OnExit(42, 7, time.Now())
	waitFor(t, "the first look", 2*time.Second, func() bool { return rt.underway.Load() == 1 })
	p.OnEmptied(42, time.Now())
	p.OnEmptied(42, time.Now())
	time.Sleep(50 * time.Millisecond)
	if got := rt.most.Load(); got != 1 {
		t.Fatalf("%d inspections of one container at once", got)
	}
	if got := rt.asked.Load(); got != 1 {
		t.Fatalf("the runtime was asked %d times while the first look waited", got)
	}

	close(rt.gate)
	waitFor(t, "the round to end", 2*time.Second, func() bool { return planeExitsDropped.Get() == dropped+1 })
	if got := rt.most.Load(); got != 1 {
		t.Fatalf("%d inspections of one container at once", got)
	}
	if got := rt.asked.Load(); got != 3 {
		t.Fatalf("the runtime was asked %d times, want the round's 3", got)
	}
}
