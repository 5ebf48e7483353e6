package stages_test

import (
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podline/podline/cri/fake"
	"github.com/podline/podline/stages"
)

// hookExec answers the fake runtime's ExecSync: "hook <name>" blocks until
// that gate opens and exits with its code; anything else exits 0.
type hookExec struct {
	mu    sync.Mutex
	gates map[string]chan struct{}
	codes map[string][]int32 // exit codes, one per run, the last repeats
}

func newHookExec() *hookExec {
	return &hookExec{gates: map[string]chan struct{}{}, codes: map[string][]int32{}}
}

// gate makes "hook name" wait until open is called, and opens it at the
// end of the test at the latest (a blocked fake handler would hold the
// server's stop).
func (e *hookExec) gate(t *testing.T, name string) (open func()) {
	ch := make(chan struct{})
	e.mu.Lock()
	e.gates[name] = ch
	e.mu.Unlock()
	var once sync.Once
	open = func() { once.Do(func() { close(ch) }) }
	t.Cleanup(open)
	return open
}

func (e *hookExec) exit(name string, codes ...int32) {
	e.mu.Lock()
	e.codes[name] = codes
	e.mu.Unlock()
}

func (e *hookExec) run(_ string, cmd []string) ([]byte, []byte, int32) {
	if len(cmd) != 2 || cmd[0] != "hook" {
		return nil, nil, 0
	}
	e.mu.Lock()
	gate := e.gates[cmd[1]]
	var code int32
	if cs := e.codes[cmd[1]]; len(cs) > 0 {
		code = cs[0]
		if len(cs) > 1 {
			e.codes[cmd[1]] = cs[1:]
		}
	}
	e.mu.Unlock()
	if gate != nil {
		<-gate
	}
	return []byte("ran " + cmd[1] + "\n"), nil, code
}

func withPostStart(container string) func(*v1.Pod) {
	return func(p *v1.Pod) {
		for _, list := range [][]v1.Container{p.Spec.InitContainers, p.Spec.Containers} {
			for i := range list {
				if list[i].Name == container {
					list[i].Lifecycle = &v1.Lifecycle{PostStart: &v1.LifecycleHandler{
						Exec: &v1.ExecAction{Command: []string{"hook", container}}}}
				}
			}
		}
	}
}

func withApp(name string) func(*v1.Pod) {
	return func(p *v1.Pod) {
		c := p.Spec.Containers[0]
		c.Name = name
		p.Spec.Containers = append(p.Spec.Containers, c)
	}
}

func hookHarness(t *testing.T, q stages.QueueKind) (*harness, *hookExec, *eventLog) {
	exec, log := newHookExec(), &eventLog{}
	h := newHarness(t, harnessOpts{queue: q, events: log, fake: fake.Options{Exec: exec.run}})
	return h, exec, log
}

// holdsFor checks that the published status keeps satisfying cond for d.
func (h *harness) holdsFor(uid types.UID, d time.Duration, what string, cond func(st v1.PodStatus) bool) {
	h.t.Helper()
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		if st, _, ok := h.store.Status(uid); ok && !cond(st) {
			h.t.Fatalf("%s: not so any more: phase=%s containers=%+v", what, st.Phase, st.ContainerStatuses)
		}
	}
}

// A container is running once its postStart hook returned: until then the
// pod's status shows it waiting to be created (with the pod's IP already
// published) and its pod Pending.
func TestPostStartHoldsRunning(t *testing.T) { eachQueue(t, testPostStartHoldsRunning) }

func testPostStartHoldsRunning(t *testing.T, q stages.QueueKind) {
	h, exec, _ := hookHarness(t, q)
	open := exec.gate(t, "app")
	pod := testPod("hooked", withPostStart("app"))
	h.pipe.Upsert(pod)
	creating := func(st v1.PodStatus) bool {
		cs := st.ContainerStatuses[0]
		return st.Phase == v1.PodPending && cs.State.Waiting != nil && cs.State.Waiting.Reason == "ContainerCreating" &&
			cs.ContainerID != "" && cs.Started != nil && !*cs.Started && !cs.Ready
	}
	st := h.waitFor(pod.UID, "created, its hook running", creating)
	if st.PodIP == "" {
		t.Error("no pod IP published while the hook runs")
	}
	h.holdsFor(pod.UID, 300*time.Millisecond, "waiting while the hook runs", creating)
	open()
	st = h.waitRunning(pod.UID)
	if rc := st.ContainerStatuses[0].RestartCount; rc != 0 {
		t.Errorf("restartCount %d after a hook that succeeded", rc)
	}
}

// A failed postStart hook: the warning (without the hook's output), the
// container stopped with Killing "FailedPostStartHook", then restarted as
// after any exit; the next start's hook succeeds and the pod runs.
func TestPostStartFailureRestarts(t *testing.T) { eachQueue(t, testPostStartFailureRestarts) }

func testPostStartFailureRestarts(t *testing.T, q stages.QueueKind) {
	h, exec, log := hookHarness(t, q)
	exec.exit("app", 1, 0)
	pod := testPod("hookfail", withPostStart("app"))
	h.pipe.Upsert(pod)
	log.wait(t, "hookfail Warning FailedPostStartHook app: PostStartHook failed")
	log.wait(t, "hookfail Normal Killing app: FailedPostStartHook")
	st := h.waitFor(pod.UID, "running again", func(st v1.PodStatus) bool {
		cs := st.ContainerStatuses[0]
		return cs.RestartCount == 1 && cs.State.Running != nil
	})
	if last := st.ContainerStatuses[0].LastTerminationState.Terminated; last == nil {
		t.Errorf("lastState %+v, want the killed instance", st.ContainerStatuses[0].LastTerminationState)
	}
}

// Under Never the container whose hook failed stays stopped and the pod
// fails.
func TestPostStartFailureNever(t *testing.T) {
	h, exec, log := hookHarness(t, stages.QueueLockFree)
	exec.exit("app", 1)
	pod := testPod("hooknever", withPostStart("app"), withPolicy(v1.RestartPolicyNever))
	h.pipe.Upsert(pod)
	st := h.waitFor(pod.UID, "Failed", func(st v1.PodStatus) bool { return st.Phase == v1.PodFailed })
	cs := st.ContainerStatuses[0]
	if cs.State.Terminated == nil || cs.RestartCount != 0 {
		t.Errorf("state %+v, restarts %d: want terminated, never restarted", cs.State, cs.RestartCount)
	}
	log.wait(t, "FailedPostStartHook app: PostStartHook failed")
}

// The containers after one whose postStart hook runs wait for it, as
// they wait in the kubelet's sync of the pod.
func TestPostStartOrdersStarts(t *testing.T) {
	h, exec, _ := hookHarness(t, stages.QueueLockFree)
	open := exec.gate(t, "app")
	pod := testPod("ordered", withApp("b"), withPostStart("app"))
	h.pipe.Upsert(pod)
	waitingB := func(st v1.PodStatus) bool {
		return len(st.ContainerStatuses) == 2 && st.ContainerStatuses[0].ContainerID != "" && st.ContainerStatuses[1].ContainerID == ""
	}
	h.waitFor(pod.UID, "app created, b not", waitingB)
	h.holdsFor(pod.UID, 300*time.Millisecond, "b waits for app's hook", waitingB)
	open()
	h.waitRunning(pod.UID)
}

// A sidecar has started, and lets what comes after it start, only once
// its postStart hook returned.
func TestSidecarStartedWaitsForPostStart(t *testing.T) {
	h, exec, _ := hookHarness(t, stages.QueueLockFree)
	open := exec.gate(t, "proxy")
	pod := testPod("sidehook", withSidecar, withPostStart("proxy"))
	h.pipe.Upsert(pod)
	initializing := func(st v1.PodStatus) bool {
		proxy, app := st.InitContainerStatuses[0], st.ContainerStatuses[0]
		return proxy.ContainerID != "" && proxy.State.Running == nil && proxy.Started != nil && !*proxy.Started &&
			st.InitContainerStatuses[1].ContainerID == "" &&
			app.State.Waiting != nil && app.State.Waiting.Reason == "PodInitializing"
	}
	h.waitFor(pod.UID, "proxy created, nothing after it", initializing)
	h.holdsFor(pod.UID, 300*time.Millisecond, "setup and app wait for the proxy's hook", initializing)
	open()
	h.waitRunning(pod.UID)
}

// A pod deleted while a postStart hook runs is torn down at once: the
// hook is abandoned.
func TestTeardownAbandonsPostStart(t *testing.T) {
	h, exec, _ := hookHarness(t, stages.QueueLockFree)
	exec.gate(t, "app")
	pod := testPod("hookgone", withPostStart("app"))
	h.pipe.Upsert(pod)
	h.waitFor(pod.UID, "created, its hook running", func(st v1.PodStatus) bool {
		return st.ContainerStatuses[0].ContainerID != ""
	})
	h.pipe.Remove(pod.UID)
	h.waitGone(pod.UID)
}
