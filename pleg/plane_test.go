package pleg_test

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podline/podline/cri"
	"github.com/podline/podline/cri/fake"
	"github.com/podline/podline/pleg"
)

// stubCgroups hands out ids for paths, as the notifier would.
type stubCgroups struct {
	mu      sync.Mutex
	next    uint64
	ids     map[string]uint64
	removed []uint64
}

func (s *stubCgroups) Watch(path string) (uint64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.next++
	s.ids[path] = s.next
	return s.next, nil
}

func (s *stubCgroups) Unwatch(id uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.removed = append(s.removed, id)
}

func (s *stubCgroups) id(path string) uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ids[path]
}

type planeHarness struct {
	t       *testing.T
	srv     *fake.Server
	rt      *cri.Client
	cache   *pleg.Cache
	plane   *pleg.Plane
	cgroups *stubCgroups
	n       *notified
	oomPIDs chan uint32
}

// dialFake starts a fake runtime and dials it; both, and the returned
// context, end with the test.
func dialFake(t *testing.T) (context.Context, *cri.Client, *fake.Server) {
	t.Helper()
	sock, srv := fake.Listen(t, fake.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	rt, err := cri.Dial(ctx, sock, "", 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })
	return ctx, rt, srv
}

func newPlaneHarness(t *testing.T) *planeHarness {
	ctx, rt, srv := dialFake(t)
	h := &planeHarness{t: t, srv: srv, rt: rt, cache: pleg.NewCache(),
		cgroups: &stubCgroups{ids: map[string]uint64{}}, n: &notified{uids: map[types.UID]int{}},
		oomPIDs: make(chan uint32, 1)}
	h.plane = pleg.NewPlane(pleg.PlaneConfig{
		Runtime: rt, Cache: h.cache, Notify: h.n.notify, Cgroups: h.cgroups,
		OnSystemOOM: func(pid uint32, _ time.Time) { h.oomPIDs <- pid },
		Log:         slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	go h.plane.Run(ctx)
	return h
}

// start runs a sandbox and a container in the fake, records them in the
// cache as the stages would, and registers them with the plane.
func (h *planeHarness) start(uid string) (sandboxID, containerID string) {
	ctx := context.Background()
	labels := map[string]string{cri.LabelPodUID: uid, cri.LabelPodName: "p", cri.LabelPodNamespace: "ns"}
	sbCfg := &runtimeapi.PodSandboxConfig{Metadata: &runtimeapi.PodSandboxMetadata{Name: "p-" + uid, Namespace: "ns", Uid: uid}, Labels: labels}
	sb, err := h.rt.RunPodSandbox(ctx, sbCfg, "")
	if err != nil {
		h.t.Fatal(err)
	}
	id, err := h.rt.CreateContainer(ctx, sb, &runtimeapi.ContainerConfig{
		Metadata: &runtimeapi.ContainerMetadata{Name: "app"}, Image: &runtimeapi.ImageSpec{Image: "busybox"}, Labels: labels,
	}, sbCfg)
	if err != nil {
		h.t.Fatal(err)
	}
	if err := h.rt.StartContainer(ctx, id); err != nil {
		h.t.Fatal(err)
	}
	h.cache.UpsertSandbox(types.UID(uid), "p", "ns", &pleg.Sandbox{ID: sb, State: pleg.SandboxReady})
	h.cache.UpsertContainer(types.UID(uid), &pleg.Container{ID: id, SandboxID: sb, Name: "app", State: pleg.ContainerRunning, StartedAt: time.Now()})
	h.plane.SandboxStarted(types.UID(uid), sb, "/kubepods/pod"+uid)
	h.plane.ContainerStarted(types.UID(uid), sb, id, "/kubepods/pod"+uid)
	return sb, id
}

func (h *planeHarness) waitContainer(uid, id, what string, cond func(*pleg.Container) bool) *pleg.Container {
	h.t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for time.Now().Before(deadline) {
		if c := h.cache.Get(types.UID(uid)).Container(id); c != nil && cond(c) {
			return c
		}
		time.Sleep(2 * time.Millisecond)
	}
	h.h().Fatalf("container %s never %s: %+v", id, what, h.cache.Get(types.UID(uid)).Container(id))
	return nil
}

func (h *planeHarness) h() *testing.T { return h.t }

func TestKernelExitWaitsForTheRuntimeToConfirm(t *testing.T) {
	h := newPlaneHarness(t)
	_, id := h.start("u1")
	cg := h.cgroups.id("/kubepods/podu1/" + id)
	if cg == 0 || h.plane.Watched() != 2 {
		t.Fatalf("not registered: id %d, watched %d", cg, h.plane.Watched())
	}
	h.n.take()

	// The kernel reports the exit before the runtime knows: the cache
	// waits for the runtime's word.
	h.plane.OnExit(cg, 3, time.Now())
	if c := h.cache.Get("u1").Container(id); c.State != pleg.ContainerRunning {
		t.Fatalf("after the kernel event alone: %+v", c)
	}
	// The runtime catches up; the inspection keeps asking until it does.
	time.Sleep(60 * time.Millisecond)
	if got := h.n.take(); len(got) != 0 {
		t.Fatalf("notified %v before the runtime confirmed", got)
	}
	if err := h.srv.ExitContainer(id, 3); err != nil {
		t.Fatal(err)
	}
	c := h.waitContainer("u1", id, "confirmed by the runtime", func(c *pleg.Container) bool { return c.State == pleg.ContainerExited })
	if c.ExitCode != 3 || c.Reason != "Error" || !c.Detailed {
		t.Fatalf("after the runtime confirmed: %+v", c)
	}
	if got := h.n.take(); got["u1"] != 1 {
		t.Fatalf("notified %v", got)
	}
}

func TestOOMKillIsTheReason(t *testing.T) {
	h := newPlaneHarness(t)
	_, id := h.start("u2")
	cg := h.cgroups.id("/kubepods/podu2/" + id)
	h.plane.OnOOM(cg, 4242, time.Now())
	h.plane.OnExit(cg, 137, time.Now())
	// The runtime says SIGKILL without naming the OOM: podline names it.
	h.srv.ExitContainer(id, 137)
	c := h.waitContainer("u2", id, "confirmed", func(c *pleg.Container) bool { return c.Detailed && c.State == pleg.ContainerExited })
	if c.Reason != "OOMKilled" || c.ExitCode != 137 {
		t.Fatalf("OOM-killed container after inspection: %+v", c)
	}
}

func TestSystemOOMAndUnknownCgroups(t *testing.T) {
	h := newPlaneHarness(t)
	before := pleg.SystemOOMs()
	h.plane.OnOOM(999999, 77, time.Now())
	select {
	case pid := <-h.oomPIDs:
		if pid != 77 {
			t.Fatalf("pid %d", pid)
		}
	case <-time.After(time.Second):
		t.Fatal("system OOM not passed on")
	}
	if pleg.SystemOOMs() != before+1 {
		t.Fatal("system OOM not counted")
	}
	h.plane.OnExit(999999, 1, time.Now())
	h.plane.OnEmptied(999999, time.Now())
	if got := h.n.take(); len(got) != 0 {
		t.Fatalf("events for unknown cgroups notified %v", got)
	}
}

func TestEmptiedCgroupIsInspected(t *testing.T) {
	h := newPlaneHarness(t)
	_, id := h.start("u3")
	h.srv.ExitContainer(id, 0)
	h.plane.OnEmptied(h.cgroups.id("/kubepods/podu3/"+id), time.Now())
	c := h.waitContainer("u3", id, "exited", func(c *pleg.Container) bool { return c.State == pleg.ContainerExited })
	if c.ExitCode != 0 || !c.Detailed {
		t.Fatalf("after inspection: %+v", c)
	}
}

func TestRemovalUnwatches(t *testing.T) {
	h := newPlaneHarness(t)
	sb, _ := h.start("u4")
	other, _ := h.start("u5")
	h.plane.SandboxRemoved(sb)
	if h.plane.Watched() != 2 {
		t.Fatalf("watching %d after one of two sandboxes went, want the other's 2", h.plane.Watched())
	}
	h.plane.SandboxRemoved(other)
	if h.plane.Watched() != 0 {
		t.Fatalf("still watching %d", h.plane.Watched())
	}
	h.cgroups.mu.Lock()
	defer h.cgroups.mu.Unlock()
	if len(h.cgroups.removed) != 4 {
		t.Fatalf("unwatched %v, want both sandboxes and containers", h.cgroups.removed)
	}
}
