package prober

import (
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podline/podline/internal/monotime"
)

func TestInitialDelayAndJitter(t *testing.T) {
	h := newHarness(t, 4)
	h.m.jitter = func(p time.Duration) time.Duration { return 3 * time.Second }
	pod := podWith("d1", nil, execProbe("ready", func(p *v1.Probe) { p.InitialDelaySeconds = 30 }), nil)
	h.m.Sync(pod, "10.0.0.1", runningApp("c1", h.clock.Now()))
	h.step(32 * time.Second)
	if n := h.exec.count("c1", "ready"); n != 0 {
		t.Fatalf("ran %d times before initialDelaySeconds plus its jitter", n)
	}
	h.step(time.Second)
	if n := h.exec.count("c1", "ready"); n != 1 {
		t.Fatalf("%d runs at 33 s, want 1", n)
	}
	h.step(period - time.Second)
	if n := h.exec.count("c1", "ready"); n != 1 {
		t.Fatalf("%d runs before a period passed", n)
	}
	h.step(time.Second)
	if n := h.exec.count("c1", "ready"); n != 2 {
		t.Fatalf("%d runs one period later, want 2", n)
	}
}

func TestRealJitterSpreadsFirstRuns(t *testing.T) {
	h := newHarness(t, 4)
	h.m.jitter = New(Config{}).jitter // the real one
	const pods = 200
	for i := range pods {
		uid := "j" + string(rune('a'+i/26)) + string(rune('a'+i%26))
		h.m.Sync(podWith(uid, nil, execProbe("ready"), nil), "10.0.0.1", runningApp("c-"+uid, h.clock.Now()))
	}
	perSecond := make([]int, 0, 10)
	last := 0
	for range 10 {
		h.step(time.Second)
		n := h.exec.total()
		perSecond = append(perSecond, n-last)
		last = n
	}
	if last != pods {
		t.Fatalf("%d first runs within one period, want %d", last, pods)
	}
	for s, n := range perSecond {
		if n > pods/4 {
			t.Fatalf("%d of %d first runs fell in second %d: %v", n, pods, s, perSecond)
		}
	}
}

func TestNotRunningIsNotProbed(t *testing.T) {
	h := newHarness(t, 2)
	pod := podWith("n1", execProbe("live"), execProbe("ready"), nil)
	h.m.Sync(pod, "10.0.0.1", nil)
	h.step(period)
	if n := h.exec.total(); n != 0 {
		t.Fatalf("%d runs of a container that does not run", n)
	}
	if st := h.m.Status("n1", "app"); st.Started || st.Ready || st.Kill != nil {
		t.Fatalf("not running: %+v", st)
	}
	h.m.Sync(pod, "10.0.0.1", runningApp("c1", h.clock.Now()))
	h.settle()
	h.m.Sync(pod, "10.0.0.1", nil) // exited
	h.step(3 * period)
	if n := h.exec.total(); n != 2 {
		t.Fatalf("%d runs, want 2 (one per probe before the container exited)", n)
	}
}

func TestTerminatingPodStopsLivenessAndStartup(t *testing.T) {
	h := newHarness(t, 2)
	h.exec.set(exits(map[string]int32{"live": 1, "start": 1, "ready": 0}))
	pod := podWith("t1", execProbe("live", func(p *v1.Probe) { p.FailureThreshold = 2 }), execProbe("ready"),
		execProbe("start", func(p *v1.Probe) { p.FailureThreshold = 10 }))
	h.m.Sync(pod, "10.0.0.1", runningApp("c1", h.clock.Now()))
	h.settle()

	deleting := pod.DeepCopy()
	now := metav1.NewTime(h.clock.Now())
	deleting.DeletionTimestamp = &now
	h.m.Sync(deleting, "10.0.0.1", runningApp("c1", h.clock.Now()))
	h.step(5 * period)
	if h.exec.count("c1", "start") != 1 || h.exec.count("c1", "live") != 0 {
		t.Fatalf("startup %d runs, liveness %d, after deletion began", h.exec.count("c1", "start"), h.exec.count("c1", "live"))
	}
	st := h.m.Status("t1", "app")
	if st.Kill != nil || !st.Started || !st.Ready {
		t.Fatalf("terminating: %+v; startup stands at success and readiness keeps running", st)
	}
}

func TestRunOfAReplacedContainerIsThrownAway(t *testing.T) {
	h := newHarness(t, 2)
	release := make(chan struct{})
	h.exec.set(func(id string, cmd []string) (*runtimeapi.ExecSyncResponse, error) {
		if id == "c1" {
			<-release
			return &runtimeapi.ExecSyncResponse{}, nil
		}
		return &runtimeapi.ExecSyncResponse{ExitCode: 1}, nil
	})
	pod := podWith("x1", nil, execProbe("ready"), nil)
	h.m.Sync(pod, "10.0.0.1", runningApp("c1", h.clock.Now()))
	for h.exec.count("c1", "ready") == 0 {
		time.Sleep(time.Millisecond)
	}
	h.m.Sync(pod, "10.0.0.1", runningApp("c2", h.clock.Now()))
	close(release)
	h.settle()
	if st := h.m.Status("x1", "app"); st.Ready {
		t.Fatal("the old container's success made the new one ready")
	}
	if h.exec.count("c2", "ready") != 1 {
		t.Fatalf("the new container was probed %d times, want 1", h.exec.count("c2", "ready"))
	}
}

func TestSyncUnchangedIsCheap(t *testing.T) {
	h := newHarness(t, 2)
	jitters := 0
	h.m.jitter = func(time.Duration) time.Duration { jitters++; return time.Second }
	pod := podWith("i1", execProbe("live"), execProbe("ready"), nil)
	running := runningApp("c1", h.clock.Now())
	h.m.Sync(pod, "10.0.0.1", running)
	allocs := testing.AllocsPerRun(100, func() { h.m.Sync(pod, "10.0.0.1", running) })
	if allocs != 0 {
		t.Fatalf("%v allocations per unchanged Sync", allocs)
	}
	if jitters != 2 {
		t.Fatalf("%d schedules, want 2 (one per probe, the first Sync)", jitters)
	}
}

func TestRemoveStopsProbes(t *testing.T) {
	h := newHarness(t, 2)
	pod := podWith("rm1", execProbe("live"), execProbe("ready"), nil)
	h.m.Sync(pod, "10.0.0.1", runningApp("c1", h.clock.Now()))
	h.settle()
	h.m.Remove(types.UID("rm1"))
	h.step(3 * period)
	if n := h.exec.total(); n != 2 {
		t.Fatalf("%d runs, want 2: removed probes must not run", n)
	}
	if st := h.m.Status("rm1", "app"); st != (ContainerProbeStatus{}) {
		t.Fatalf("removed pod reads %+v", st)
	}
	h.m.mu.Lock()
	left := h.m.due.Len()
	h.m.mu.Unlock()
	if left != 0 {
		t.Fatalf("%d probes left on the heap", left)
	}
}

// Probes falling due within one step of the coalescing grid run together
// at its next point, and none later than that.
func TestCoalescedWakeUps(t *testing.T) {
	h := newHarness(t, 4)
	h.m.coalesce = 10 * time.Millisecond
	offsets := []time.Duration{
		time.Second + time.Millisecond, time.Second + 4*time.Millisecond, time.Second + 9*time.Millisecond,
		time.Second + 12*time.Millisecond,
	}
	next := 0
	h.m.jitter = func(time.Duration) time.Duration { d := offsets[next]; next++; return d }
	if r := h.clock.Now().UnixNano() % int64(h.m.coalesce); r != 0 {
		h.step(h.m.coalesce - time.Duration(r)) // start on the grid
	}
	for i := range offsets {
		uid := "co" + string(rune('a'+i))
		h.m.Sync(podWith(uid, nil, execProbe("ready"), nil), "10.0.0.1", runningApp("c-"+uid, h.clock.Now()))
	}
	// The scheduler takes what is due whenever it wakes: let it go to
	// sleep on its timer first, set for the grid point.
	gridPoint := h.clock.Now().Add(time.Second + 10*time.Millisecond)
	for deadline := time.Now().Add(5 * time.Second); !h.clock.armedAt(gridPoint); {
		if time.Now().After(deadline) {
			t.Fatal("the scheduler never slept until the grid point")
		}
		time.Sleep(time.Millisecond)
	}
	h.step(time.Second + 9*time.Millisecond)
	if n := h.exec.total(); n != 0 {
		t.Fatalf("%d runs before the grid point, want them held to it", n)
	}
	h.step(time.Millisecond)
	if n := h.exec.total(); n != 3 {
		t.Fatalf("%d runs at the grid point, want the 3 due within its step", n)
	}
	h.step(10 * time.Millisecond)
	if n := h.exec.total(); n != 4 {
		t.Fatalf("%d runs at the next grid point, want 4", n)
	}
}

func TestWakeAt(t *testing.T) {
	m := &Manager{coalesce: 10 * time.Millisecond}
	f := func(due, want time.Time) {
		t.Helper()
		if got := m.wakeAt(due); !got.Equal(want) {
			t.Errorf("wakeAt(%v) = %v, want %v", due.UnixNano(), got.UnixNano(), want.UnixNano())
		}
	}
	base := time.Unix(100, 0)
	f(base, base)
	f(base.Add(time.Nanosecond), base.Add(10*time.Millisecond))
	f(base.Add(9999*time.Microsecond), base.Add(10*time.Millisecond))
	f(base.Add(10*time.Millisecond), base.Add(10*time.Millisecond))
	m.coalesce = 0
	f(base.Add(time.Nanosecond), base.Add(time.Nanosecond))
}

// The runtime's start stamp is a wall-clock time. Every due time of the
// container's probes is counted from it, so it is fixed on the monotonic
// clock when it comes in: due times kept on the wall clock would stop the
// probes for an hour when the clock is set back an hour. A start stamped
// after now (the clock was set back since it started) is now.
func TestProbesCountOnTheMonotonicClock(t *testing.T) {
	f := func(name string, started time.Duration, wantIn time.Duration) {
		t.Helper()
		m := New(Config{Exec: newFakeExec()}) // the real clock; not run
		m.jitter = func(time.Duration) time.Duration { return 0 }
		pod := podWith("m1", nil, execProbe("ready", func(p *v1.Probe) { p.InitialDelaySeconds = 30 }), nil)
		now := time.Now()
		m.Sync(pod, "10.0.0.1", runningApp("c1", now.Round(0).Add(started)))
		after := time.Now()
		m.mu.Lock()
		p := m.pods["m1"].containers[0].probes[Readiness]
		due := p.due
		next := nextDue(due, p.spec.period, due)
		m.mu.Unlock()
		if !monotime.Has(due) || !monotime.Has(next) {
			t.Fatalf("%s: due %v, next %v: no monotonic reading", name, due, next)
		}
		// Sync read the clock between now and after; the wall and the
		// monotonic clock may part by the odd microsecond meanwhile (the
		// wall clock is slewed).
		lo, hi := now.Add(wantIn-time.Millisecond), after.Add(wantIn+time.Millisecond)
		if due.Before(lo) || due.After(hi) {
			t.Errorf("%s: due in %s, want %s", name, due.Sub(now), wantIn)
		}
	}
	f("started ten seconds ago", -10*time.Second, 20*time.Second)
	f("stamped an hour ahead: the clock was set back", time.Hour, 30*time.Second)
}
