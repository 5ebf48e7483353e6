package stages

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podline/podline/pleg"
)

func withPreStop(name string, cmd ...string) func(*v1.Pod) {
	return func(p *v1.Pod) {
		spec := specNamed(p, name)
		spec.Lifecycle = &v1.Lifecycle{PreStop: &v1.LifecycleHandler{Exec: &v1.ExecAction{Command: cmd}}}
	}
}

func withGrace(seconds int64) func(*v1.Pod) {
	return func(p *v1.Pod) { p.Spec.TerminationGracePeriodSeconds = &seconds }
}

func TestPreStopOf(t *testing.T) {
	pod := unitPod(withApps("a", "b"), withPreStop("a", "drain"), withGrace(30))
	k := func(name string) KillAction { return KillAction{ID: name + "1", Name: name, SandboxID: "sb1"} }
	f := func(what string, pod *v1.Pod, c *pleg.Container, k KillAction, want time.Duration) {
		t.Helper()
		got := preStopOf(pod, c, k)
		switch {
		case want == 0 && got != nil:
			t.Errorf("%s: hook %+v, want none", what, got)
		case want != 0 && (got == nil || got.grace != want || got.spec.Name != k.Name):
			t.Errorf("%s: hook %+v, want one with %v", what, got, want)
		}
	}
	f("a running container with a preStop: the pod's grace period", pod, rtRunning("a1", "sb1", "a", 0), k("a"), 30*time.Second)
	f("no preStop", pod, rtRunning("b1", "sb1", "b", 0), k("b"), 0)
	f("created, never started: nothing to shut down", pod, rtCreated("a1", "sb1", "a", 0), k("a"), 0)
	f("exited already", pod, rtExited("a1", "sb1", "a", 0, 0, baseTime), k("a"), 0)
	f("unknown to the cache", pod, nil, k("a"), 0)
	f("an orphan: no spec", nil, rtRunning("a1", "sb1", "a", 0), k("a"), 0)
	f("a stray no longer in the spec", pod, rtRunning("x1", "sb1", "x", 0), k("x"), 0)
	probe := k("a")
	probe.Grace = ptrOf(int64(5))
	f("a probe's grace period wins", pod, rtRunning("a1", "sb1", "a", 0), probe, 5*time.Second)
	deleted := unitPod(withApps("a"), withPreStop("a", "drain"), withGrace(30))
	deleted.DeletionGracePeriodSeconds = ptrOf(int64(0))
	f("deleted with no grace: no time for a hook", deleted, rtRunning("a1", "sb1", "a", 0), k("a"), 0)
	sidecar := unitPod(withInits("proxy"), withSidecars("proxy"), withPreStop("proxy", "drain"))
	f("a sidecar's", sidecar, rtRunning("proxy1", "sb1", "proxy", 0), k("proxy"), 30*time.Second)
}

func TestHookAddress(t *testing.T) {
	node := &Node{IPs: []string{"192.0.2.10"}}
	sb := rtReady("sb1", 0)
	if got := hookAddress(unitPod(), sb, node); got != "10.88.0.5" {
		t.Errorf("pod network: %q", got)
	}
	host := unitPod(func(p *v1.Pod) { p.Spec.HostNetwork = true })
	if got := hookAddress(host, sb, node); got != "192.0.2.10" {
		t.Errorf("host network: %q", got)
	}
	if got := hookAddress(unitPod(), nil, node); got != "" {
		t.Errorf("no sandbox: %q", got)
	}
}

func TestPreStopOnce(t *testing.T) {
	var o preStopOnce
	if !o.claim("a1") || o.claim("a1") {
		t.Fatal("a hook ran twice for one instance, or never")
	}
	if !o.claim("a2") {
		t.Fatal("another instance's hook refused")
	}
	o.forget("a1")
	if !o.claim("a1") {
		t.Fatal("a forgotten instance stays claimed")
	}
}

// hookRuntime is a ContainerRuntime for the preStop tests: exec answers
// per container, and every call is logged with its time. The calls the
// tests do not look at are stopRecorder's.
type hookRuntime struct {
	stopRecorder
	exec  func(ctx context.Context, id string) (*runtimeapi.ExecSyncResponse, error)
	mu    sync.Mutex
	calls []string
	at    map[string]time.Time
	grace map[string]time.Duration
}

func newHookRuntime(exec func(ctx context.Context, id string) (*runtimeapi.ExecSyncResponse, error)) *hookRuntime {
	return &hookRuntime{exec: exec, at: map[string]time.Time{}, grace: map[string]time.Duration{}}
}

func (r *hookRuntime) log(call string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, call)
	r.at[call] = time.Now()
}

func (r *hookRuntime) ExecSync(ctx context.Context, id string, _ []string, _ time.Duration) (*runtimeapi.ExecSyncResponse, error) {
	r.log("exec " + id)
	return r.exec(ctx, id)
}

func (r *hookRuntime) StopContainer(_ context.Context, id string, grace time.Duration) error {
	r.log("stop " + id)
	r.mu.Lock()
	r.grace[id] = grace
	r.mu.Unlock()
	return nil
}

// eventList records events as "type reason container: message".
type eventList struct {
	mu     sync.Mutex
	events []string
}

func (l *eventList) PodEvent(_ *v1.Pod, container, eventType, reason, message string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.events = append(l.events, fmt.Sprintf("%s %s %s: %s", eventType, reason, container, message))
}

func (l *eventList) has(want string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, e := range l.events {
		if e == want {
			return true
		}
	}
	return false
}

// tearDown runs the teardown of pod, whose containers run in sandbox sb1,
// against rt, to its end.
func tearDown(t *testing.T, pod *v1.Pod, rt ContainerRuntime, ev Recorder, running ...string) *pleg.Cache {
	t.Helper()
	pod.DeletionTimestamp = &metav1.Time{Time: baseTime}
	cache := pleg.NewCache()
	cache.UpsertSandbox(pod.UID, pod.Name, pod.Namespace, rtReady("sb1", 0))
	for _, name := range running {
		cache.UpsertContainer(pod.UID, rtRunning(name+"1", "sb1", name, 0))
	}
	s := &ContainerStage{Runtime: rt, Cache: cache, Events: ev}
	out := s.Handle(&Work{UID: pod.UID, Pod: pod, Sync: &PodSync{}, Teardown: true, ctx: context.Background()})
	if out.Async == nil {
		t.Fatal("teardown planned no stop")
	}
	if err := out.Async(context.Background()); err != nil {
		t.Fatal(err)
	}
	return cache
}

// The preStop hook runs before the stop signal, and its time comes off
// the grace period; a container without one is stopped at once, with the
// whole grace period.
func TestPreStopRunsBeforeTheStop(t *testing.T) {
	const hookTakes = 1200 * time.Millisecond
	rt := newHookRuntime(func(ctx context.Context, id string) (*runtimeapi.ExecSyncResponse, error) {
		time.Sleep(hookTakes)
		return &runtimeapi.ExecSyncResponse{}, nil
	})
	ev := &eventList{}
	pod := unitPod(withApps("a", "b"), withPreStop("a", "drain"), withGrace(5))
	began := time.Now()
	tearDown(t, pod, rt, ev, "a", "b")
	if rt.at["stop a1"].Before(rt.at["exec a1"].Add(hookTakes)) {
		t.Errorf("a stopped at +%v, before its hook (+%v) returned", rt.at["stop a1"].Sub(began), rt.at["exec a1"].Sub(began))
	}
	if g := rt.grace["a1"]; g > 5*time.Second-hookTakes || g < 5*time.Second-hookTakes-time.Second {
		t.Errorf("a got %v to stop, want what its 1.2s hook left of 5s", g)
	}
	if _, ran := rt.at["exec b1"]; ran || rt.grace["b1"] != 5*time.Second || !rt.at["stop b1"].Before(rt.at["stop a1"]) {
		t.Errorf("b (no hook) stopped at +%v with %v, want at once with the whole 5s", rt.at["stop b1"].Sub(began), rt.grace["b1"])
	}
	if !ev.has("Normal Killing a: Stopping container a") || ev.has("Warning FailedPreStopHook a: PreStopHook failed") {
		t.Errorf("events %q", ev.events)
	}
}

// A failed hook is a warning, without its output, and the stop goes on
// with what is left of the grace period.
func TestPreStopFailureStillStops(t *testing.T) {
	rt := newHookRuntime(func(context.Context, string) (*runtimeapi.ExecSyncResponse, error) {
		return &runtimeapi.ExecSyncResponse{ExitCode: 1, Stderr: []byte("secret")}, nil
	})
	ev := &eventList{}
	pod := unitPod(withApps("a"), withPreStop("a", "drain"), withGrace(5))
	tearDown(t, pod, rt, ev, "a")
	if _, ok := rt.at["stop a1"]; !ok || rt.grace["a1"] < 4*time.Second {
		t.Errorf("a stopped: %v with %v; want a stop with nearly all of 5s", ok, rt.grace["a1"])
	}
	if !ev.has("Warning FailedPreStopHook a: PreStopHook failed") {
		t.Errorf("events %q, want FailedPreStopHook", ev.events)
	}
}

// A hook still running when the grace period ends is abandoned: the stop
// goes on with minKillGrace, and the abandoned hook is no failure.
func TestPreStopBoundedByGrace(t *testing.T) {
	rt := newHookRuntime(func(ctx context.Context, _ string) (*runtimeapi.ExecSyncResponse, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	})
	ev := &eventList{}
	pod := unitPod(withApps("a"), withPreStop("a", "sleep", "3600"), withGrace(1))
	began := time.Now()
	tearDown(t, pod, rt, ev, "a")
	if took := rt.at["stop a1"].Sub(began); took < time.Second || took > 3*time.Second {
		t.Errorf("a stopped %v after the kill began, want once its 1s grace period ended", took)
	}
	if rt.grace["a1"] != minKillGrace {
		t.Errorf("a got %v to stop, want the minimum %v", rt.grace["a1"], minKillGrace)
	}
	if ev.has("Warning FailedPreStopHook a: PreStopHook failed") {
		t.Error("an abandoned hook was reported as failed")
	}
}

// Every hook of a kill starts at once, a sidecar's too; only the
// sidecar's stop waits for the app containers.
func TestSidecarPreStopStartsWithTheKill(t *testing.T) {
	rt := newHookRuntime(func(ctx context.Context, id string) (*runtimeapi.ExecSyncResponse, error) {
		if id == "a1" {
			time.Sleep(300 * time.Millisecond)
		}
		return &runtimeapi.ExecSyncResponse{}, nil
	})
	pod := unitPod(withInits("proxy"), withSidecars("proxy"), withApps("a"),
		withPreStop("proxy", "drain"), withPreStop("a", "drain"), withGrace(10))
	tearDown(t, pod, rt, nil, "proxy", "a")
	if !rt.at["exec proxy1"].Before(rt.at["stop a1"]) {
		t.Errorf("calls %q: the proxy's hook waited for the app to stop", rt.calls)
	}
	if !rt.at["stop proxy1"].After(rt.at["stop a1"]) {
		t.Errorf("calls %q: the proxy stopped before the app", rt.calls)
	}
}

// A stop that failed and is tried again does not run the hook again.
func TestPreStopOncePerInstance(t *testing.T) {
	var execs int
	var mu sync.Mutex
	rt := newHookRuntime(func(context.Context, string) (*runtimeapi.ExecSyncResponse, error) {
		mu.Lock()
		execs++
		mu.Unlock()
		return &runtimeapi.ExecSyncResponse{}, nil
	})
	failing := &failingStop{hookRuntime: rt, fail: 1}
	pod := unitPod(withApps("a"), withPreStop("a", "drain"), withGrace(5))
	pod.DeletionTimestamp = &metav1.Time{Time: baseTime}
	cache := pleg.NewCache()
	cache.UpsertSandbox(pod.UID, pod.Name, pod.Namespace, rtReady("sb1", 0))
	cache.UpsertContainer(pod.UID, rtRunning("a1", "sb1", "a", 0))
	s := &ContainerStage{Runtime: failing, Cache: cache}
	w := &Work{UID: pod.UID, Pod: pod, Sync: &PodSync{}, Teardown: true, ctx: context.Background()}
	if err := s.Handle(w).Async(context.Background()); err == nil {
		t.Fatal("the first stop did not fail")
	}
	if err := s.Handle(w).Async(context.Background()); err != nil {
		t.Fatal(err)
	}
	if execs != 1 {
		t.Errorf("the hook ran %d times for one instance", execs)
	}
}

// failingStop fails the first fail stops.
type failingStop struct {
	*hookRuntime
	fail int
}

func (f *failingStop) StopContainer(ctx context.Context, id string, grace time.Duration) error {
	if f.fail > 0 {
		f.fail--
		return fmt.Errorf("runtime busy")
	}
	return f.hookRuntime.StopContainer(ctx, id, grace)
}
