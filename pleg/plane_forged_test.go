package pleg

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podline/podline/internal/podtest"
)

// msgForgedExit is what an operator reads of an exit the runtime denied.
const msgForgedExit = "the kernel reported the exit of a container's main process that the runtime says still runs; " +
	"ignored: a process of the container that is pid 1 of a pid namespace of its own exited " +
	"(later reports for this container are counted in podline_pleg_kernel_exits_dropped_total)"

// sayRuntime answers ContainerStatus with whatever state it was last
// told, as a runtime whose container runs on whatever the kernel said.
type sayRuntime struct {
	mu       sync.Mutex
	state    runtimeapi.ContainerState
	exitCode int32
	reason   string
	err      error // answered instead, while set
	asked    atomic.Int32
}

// fail makes the runtime answer err (nil: answer again).
func (r *sayRuntime) fail(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.err = err
}

func (r *sayRuntime) say(state runtimeapi.ContainerState, exitCode int32, reason string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.state, r.exitCode, r.reason = state, exitCode, reason
}

func (r *sayRuntime) ContainerStatus(_ context.Context, id string) (*runtimeapi.ContainerStatus, error) {
	r.asked.Add(1)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.err != nil {
		return nil, r.err
	}
	return &runtimeapi.ContainerStatus{
		Id: id, Metadata: &runtimeapi.ContainerMetadata{Name: "app"},
		State: r.state, ExitCode: r.exitCode, Reason: r.reason,
	}, nil
}

func (r *sayRuntime) PodSandboxStatus(_ context.Context, id string) (*runtimeapi.PodSandboxStatus, error) {
	return &runtimeapi.PodSandboxStatus{Id: id, State: runtimeapi.PodSandboxState_SANDBOX_READY}, nil
}

// oneCgroup is a cgroup notifier that hands every path the same id.
type oneCgroup struct{}

func (oneCgroup) Watch(string) (uint64, error) { return 42, nil }
func (oneCgroup) Unwatch(uint64)               {}

// forgedHarness is a plane over sayRuntime with one running container
// registered under cgroup 42 (its files beneath mount, when not empty),
// and a round of confirmation shortened to three looks a millisecond
// apart.
func forgedHarness(t *testing.T, mount string) (*Plane, *sayRuntime, *Cache, *notes) {
	t.Helper()
	rt := &sayRuntime{state: runtimeapi.ContainerState_CONTAINER_RUNNING}
	cache, n := NewCache(), newNotes()
	p := NewPlane(PlaneConfig{Runtime: rt, Cache: cache, Notify: n.notify, Cgroups: oneCgroup{}, CgroupMount: mount, Log: quietLog()})
	p.firstLook, p.maxLooks, p.lagLook = time.Millisecond, 3, time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go p.Run(ctx)
	cache.UpsertSandbox("u", "p", "ns", &Sandbox{ID: "sb", State: SandboxReady})
	cache.UpsertContainer("u", &Container{ID: "c1", SandboxID: "sb", Name: "app", State: ContainerRunning, StartedAt: time.Now()})
	p.ContainerStarted("u", "sb", "c1", "/kubepods/podu")
	return p, rt, cache, n
}

// A container can make a process that is pid 1 of a pid namespace of its
// own (unshare -Urpf sh -c 'exit 7') and let it exit: the kernel reports
// that as the exit of the container's main process. The runtime, asked,
// says the container still runs: the cache never shows it exited, the
// pipeline is not told, and the report is counted as dropped.
func TestKernelExitTheRuntimeDeniesIsDropped(t *testing.T) {
	p, rt, cache, n := forgedHarness(t, "")
	dropped := planeExitsDropped.Get()

	p.OnExit(42, 7, time.Now())
	if c := cache.Get("u").Container("c1"); c.State != ContainerRunning {
		t.Fatalf("the kernel's word alone changed the container: %+v", c)
	}
	waitFor(t, "the round of looks to end", 2*time.Second, func() bool { return planeExitsDropped.Get() == dropped+1 })
	if got := rt.asked.Load(); got != 3 {
		t.Fatalf("the runtime was asked %d times, want the round's 3", got)
	}
	if c := cache.Get("u").Container("c1"); c.State != ContainerRunning {
		t.Fatalf("after the runtime said running: %+v", c)
	}
	if got := n.total(); got != 0 {
		t.Fatalf("the pipeline was told %d times of a container that runs", got)
	}

	// The container really exits later, with a code of its own: the
	// runtime's word is taken, its exit code over the kernel's.
	rt.say(runtimeapi.ContainerState_CONTAINER_EXITED, 9, "Error")
	p.OnExit(42, 7, time.Now())
	waitFor(t, "the confirmed exit", 2*time.Second, func() bool {
		return cache.Get("u").Container("c1").State == ContainerExited
	})
	if c := cache.Get("u").Container("c1"); c.ExitCode != 9 || c.Reason != "Error" || !c.Detailed {
		t.Fatalf("confirmed exit %+v, want the runtime's code 9", c)
	}
	if got := planeExitsDropped.Get() - dropped; got != 1 {
		t.Fatalf("dropped exits moved by %d, want 1 (a confirmed exit is not dropped)", got)
	}
	if got := n.count("u"); got != 1 {
		t.Fatalf("told the pipeline %d times, want once, for the confirmed exit", got)
	}
}

// Reports that keep coming while a round is under way do not start one
// each: a container that forges exits in a loop costs the runtime one
// round of looks at a time, and a round that ends lets the next begin.
func TestForgedExitsInALoopShareARound(t *testing.T) {
	p, rt, _, _ := forgedHarness(t, "")
	p.firstLook, p.maxLooks = 20*time.Millisecond, 2
	dropped := planeExitsDropped.Get()
	for range 50 {
		p.OnExit(42, 7, time.Now())
	}
	waitFor(t, "the round to end", 2*time.Second, func() bool { return planeExitsDropped.Get() == dropped+1 })
	time.Sleep(60 * time.Millisecond)
	if got, drops := rt.asked.Load(), planeExitsDropped.Get()-dropped; got != 2 || drops != 1 {
		t.Fatalf("50 reports in one round: %d looks and %d drops, want 2 and 1", got, drops)
	}
	p.OnExit(42, 7, time.Now())
	waitFor(t, "the next round", 2*time.Second, func() bool { return planeExitsDropped.Get() == dropped+2 })
}

// The OOM killer picking a process of the container (a child, say) is not
// the container's end: nothing changes until the runtime says it exited,
// and then the OOM names the reason of a SIGKILL the runtime did not name.
func TestOOMVictimWaitsForTheRuntime(t *testing.T) {
	p, rt, cache, n := forgedHarness(t, "")
	p.OnOOM(42, 4242, time.Now())
	p.OnExit(42, 137, time.Now())
	waitFor(t, "the round to end", 2*time.Second, func() bool { return rt.asked.Load() == 3 })
	if c := cache.Get("u").Container("c1"); c.State != ContainerRunning || c.Reason != "" {
		t.Fatalf("an OOM kill the runtime did not see end the container changed it: %+v", c)
	}
	if n.total() != 0 {
		t.Fatal("the pipeline was told")
	}
	rt.say(runtimeapi.ContainerState_CONTAINER_EXITED, 137, "Error")
	p.OnEmptied(42, time.Now())
	waitFor(t, "the confirmed exit", 2*time.Second, func() bool {
		return cache.Get("u").Container("c1").State == ContainerExited
	})
	if c := cache.Get("u").Container("c1"); c.Reason != "OOMKilled" || c.ExitCode != 137 {
		t.Fatalf("confirmed exit %+v, want OOMKilled 137", c)
	}
}

// A runtime far behind the kernel (seconds under load) is not a denial
// while the container's cgroup is empty: its processes are gone, so the
// exit is real, and the runtime is asked on until it says so.
func TestRuntimeLaggingPastTheRoundWhileTheCgroupIsEmpty(t *testing.T) {
	mount := t.TempDir()
	dir := filepath.Join(mount, "kubepods", "podu", "c1")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "cgroup.events"), []byte("populated 0\nfrozen 0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p, rt, cache, _ := forgedHarness(t, mount)
	dropped := planeExitsDropped.Get()
	p.OnExit(42, 137, time.Now())
	waitFor(t, "looks past the round", 2*time.Second, func() bool { return rt.asked.Load() >= 10 })
	rt.say(runtimeapi.ContainerState_CONTAINER_EXITED, 137, "Error")
	waitFor(t, "the confirmed exit", 2*time.Second, func() bool {
		return cache.Get("u").Container("c1").State == ContainerExited
	})
	if got := planeExitsDropped.Get() - dropped; got != 0 {
		t.Fatalf("a real exit the runtime was late with counted as dropped %d times", got)
	}
}

// A runtime that does not answer (containerd restarting, a call timing
// out) denies nothing: a round whose looks it failed ends quietly,
// counted apart from the dropped exits an operator may alert on as
// tampering, and logs nothing above debug. A forged exit the runtime
// later answers for is still dropped and logged, once.
func TestKernelExitTheRuntimeLeavesUnansweredIsNotDropped(t *testing.T) {
	p, rt, cache, n := forgedHarness(t, "")
	var out podtest.LogBuffer
	p.cfg.Log = slog.New(slog.NewTextHandler(&out, &slog.HandlerOptions{Level: slog.LevelInfo}))
	dropped, unanswered := planeExitsDropped.Get(), planeExitsUnanswered.Get()
	rt.fail(status.Error(codes.Unavailable, "connection error: dial unix /run/containerd/containerd.sock: connect: connection refused"))

	p.OnExit(42, 7, time.Now())
	waitFor(t, "the round of looks to end", 2*time.Second, func() bool {
		return planeExitsDropped.Get() != dropped || planeExitsUnanswered.Get() != unanswered
	})
	if got := planeExitsDropped.Get() - dropped; got != 0 {
		t.Fatalf("a round the runtime never answered counted %d dropped exits", got)
	}
	if got := planeExitsUnanswered.Get() - unanswered; got != 1 {
		t.Fatalf("unanswered exits moved by %d, want 1", got)
	}
	if out.String() != "" {
		t.Fatalf("logged above debug:\n%s", out.String())
	}
	if c := cache.Get("u").Container("c1"); c.State != ContainerRunning || n.total() != 0 {
		t.Fatalf("the container changed without the runtime's word: %+v, %d notifications", c, n.total())
	}

	// The runtime answers again, and a forged exit is what it was. The
	// drop is counted before it is logged: wait for both.
	rt.fail(nil)
	p.OnExit(42, 7, time.Now())
	waitFor(t, "the next round", 2*time.Second, func() bool {
		return planeExitsDropped.Get() == dropped+1 && len(out.Lines(msgForgedExit)) > 0
	})
	if got := out.Lines(msgForgedExit); len(got) != 1 {
		t.Fatalf("the dropped exit said %d times, want once:\n%s", len(got), out.String())
	}
	if got := planeExitsUnanswered.Get() - unanswered; got != 1 {
		t.Fatalf("unanswered exits moved by %d, want 1", got)
	}
}
