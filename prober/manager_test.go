package prober

import (
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
)

const period = 10 * time.Second

func TestReadinessFollowsThresholdsAndNotifiesOnChange(t *testing.T) {
	h := newHarness(t, 2)
	h.exec.set(exits(map[string]int32{"ready": 0}))
	pod := podWith("r1", nil, execProbe("ready", func(p *v1.Probe) { p.SuccessThreshold = 2; p.FailureThreshold = 2 }), nil)
	h.m.Sync(pod, "10.0.0.1", runningApp("c1", h.clock.Now()))

	if st := h.m.Status("r1", "app"); !st.Started || st.Ready {
		t.Fatalf("before any run: %+v, want started and not ready", st)
	}
	h.settle() // jitter 0: the first run is due at once
	if got := h.exec.count("c1", "ready"); got != 1 {
		t.Fatalf("%d runs, want 1", got)
	}
	if st := h.m.Status("r1", "app"); st.Ready || h.notes.count("r1") != 0 {
		t.Fatalf("one success of two: ready %v, %d notifies", st.Ready, h.notes.count("r1"))
	}
	h.step(period)
	if st := h.m.Status("r1", "app"); !st.Ready || h.notes.count("r1") != 1 {
		t.Fatalf("two successes: ready %v, %d notifies, want ready and 1", st.Ready, h.notes.count("r1"))
	}
	for range 5 {
		h.step(period)
	}
	if n := h.notes.count("r1"); n != 1 {
		t.Fatalf("%d notifies after runs that changed nothing, want 1", n)
	}

	h.exec.set(exits(map[string]int32{"ready": 1}))
	h.step(period)
	if st := h.m.Status("r1", "app"); !st.Ready {
		t.Fatal("one failure of two made the container unready")
	}
	h.step(period)
	if st := h.m.Status("r1", "app"); st.Ready || h.notes.count("r1") != 2 {
		t.Fatalf("two failures: ready %v, %d notifies", st.Ready, h.notes.count("r1"))
	}
	evs := h.rec.all()
	if len(evs) != 2 || evs[0] != (event{"app", v1.EventTypeWarning, "Unhealthy", "Readiness probe failed: ready said so"}) {
		t.Fatalf("events %+v, want an Unhealthy per failed run", evs)
	}
	if st := h.m.Status("r1", "app"); st.Kill != nil {
		t.Fatalf("a readiness failure kills: %+v", st.Kill)
	}
}

func TestLivenessFailureKillsAndHoldsUntilANewContainer(t *testing.T) {
	h := newHarness(t, 2)
	h.exec.set(exits(map[string]int32{"live": 1}))
	grace := int64(3)
	pod := podWith("l1", execProbe("live", func(p *v1.Probe) { p.TerminationGracePeriodSeconds = &grace }), nil, nil)
	h.m.Sync(pod, "10.0.0.1", runningApp("c1", h.clock.Now()))
	h.settle()
	h.step(period)
	if st := h.m.Status("l1", "app"); st.Kill != nil {
		t.Fatalf("two failures of three kill: %+v", st.Kill)
	}
	h.step(period)
	st := h.m.Status("l1", "app")
	if st.Kill == nil || st.Kill.Kind != Liveness || st.Kill.Message != "Container app failed liveness probe, will be restarted" ||
		st.Kill.GracePeriod == nil || *st.Kill.GracePeriod != 3 {
		t.Fatalf("three failures: %+v (kill %+v)", st, st.Kill)
	}
	if h.notes.count("l1") != 1 {
		t.Fatalf("%d notifies, want 1", h.notes.count("l1"))
	}
	for range 5 {
		h.step(period)
	}
	if n := h.exec.count("c1", "live"); n != 3 {
		t.Fatalf("%d runs, want 3: a failed liveness probe is on hold until the container is replaced", n)
	}

	// The restarted container is probed afresh: alive until proven otherwise.
	h.exec.set(exits(map[string]int32{"live": 0}))
	h.m.Sync(pod, "10.0.0.1", runningApp("c2", h.clock.Now()))
	if st := h.m.Status("l1", "app"); st.Kill != nil {
		t.Fatalf("new container still killed: %+v", st.Kill)
	}
	h.step(period)
	if n := h.exec.count("c2", "live"); n < 1 {
		t.Fatal("the new container's liveness probe never ran")
	}
}

func TestStartupHoldsLivenessAndReadinessBack(t *testing.T) {
	h := newHarness(t, 2)
	h.exec.set(exits(map[string]int32{"start": 1, "live": 0, "ready": 0}))
	pod := podWith("s1", execProbe("live"), execProbe("ready"), execProbe("start", func(p *v1.Probe) { p.FailureThreshold = 5 }))
	h.m.Sync(pod, "10.0.0.1", runningApp("c1", h.clock.Now()))
	h.settle()
	h.step(period)
	if st := h.m.Status("s1", "app"); st.Started || st.Ready {
		t.Fatalf("startup failing: %+v", st)
	}
	if h.exec.count("c1", "live")+h.exec.count("c1", "ready") != 0 {
		t.Fatal("liveness or readiness ran before the container started")
	}

	h.exec.set(exits(map[string]int32{"start": 0, "live": 0, "ready": 0}))
	h.step(period)
	// The startup success arms the others at once: one settle runs them.
	if h.exec.count("c1", "live") != 1 || h.exec.count("c1", "ready") != 1 {
		t.Fatalf("after startup: liveness %d runs, readiness %d, want 1 each at once",
			h.exec.count("c1", "live"), h.exec.count("c1", "ready"))
	}
	if st := h.m.Status("s1", "app"); !st.Started || !st.Ready {
		t.Fatalf("started and readiness succeeded: %+v", st)
	}
	starts := h.exec.count("c1", "start")
	for range 3 {
		h.step(period)
	}
	if h.exec.count("c1", "start") != starts {
		t.Fatal("the startup probe ran after it succeeded")
	}
	if h.exec.count("c1", "ready") != 4 {
		t.Fatalf("readiness ran %d times over 3 periods after its first, want 4", h.exec.count("c1", "ready"))
	}
}

func TestStartupFailureKills(t *testing.T) {
	h := newHarness(t, 2)
	h.exec.set(exits(map[string]int32{"start": 1}))
	pod := podWith("s2", nil, nil, execProbe("start", func(p *v1.Probe) { p.FailureThreshold = 1 }))
	pod.Spec.RestartPolicy = v1.RestartPolicyNever
	h.m.Sync(pod, "10.0.0.1", runningApp("c1", h.clock.Now()))
	h.settle()
	st := h.m.Status("s2", "app")
	if st.Started || st.Kill == nil || st.Kill.Kind != Startup || st.Kill.Message != "Container app failed startup probe" {
		t.Fatalf("%+v (kill %+v)", st, st.Kill)
	}
	h.step(period)
	if n := h.exec.count("c1", "start"); n != 1 {
		t.Fatalf("%d runs: a failed startup probe is on hold", n)
	}
}

// Containers started together are probed spread over a period, not at once.
func TestErroredRunChangesNothing(t *testing.T) {
	h := newHarness(t, 2)
	pod := podWith("e1", nil, nil, nil)
	pod.Spec.Containers[0].ReadinessProbe = &v1.Probe{ProbeHandler: v1.ProbeHandler{TCPSocket: &v1.TCPSocketAction{
		Port: intstrName("metrics")}}}
	h.m.Sync(pod, "127.0.0.1", runningApp("c1", h.clock.Now()))
	h.settle()
	h.step(period)
	if st := h.m.Status("e1", "app"); st.Ready {
		t.Fatal("a probe that cannot run made the container ready")
	}
	evs := h.rec.all()
	if len(evs) != 2 || evs[0].reason != "Unhealthy" ||
		evs[0].message != `Readiness probe errored and resulted in unknown state: port "metrics" not found` {
		t.Fatalf("events %+v", evs)
	}
	if h.notes.count("e1") != 0 {
		t.Fatal("an errored run notified")
	}
}

// A run whose container was replaced while it ran says nothing about the
// new one.
// Sync on a pass where nothing changed is cheap: no allocation, no new
// schedule.
func TestSidecarProbes(t *testing.T) {
	h := newHarness(t, 2)
	h.exec.set(exits(map[string]int32{"side": 1}))
	always := v1.ContainerRestartPolicyAlways
	pod := podWith("sc1", nil, nil, nil)
	pod.Spec.RestartPolicy = v1.RestartPolicyNever
	pod.Spec.InitContainers = []v1.Container{
		{Name: "init"}, // a plain init container has no probes
		{Name: "proxy", RestartPolicy: &always, LivenessProbe: execProbe("side", func(p *v1.Probe) { p.FailureThreshold = 1 })},
	}
	h.m.Sync(pod, "10.0.0.1", []Running{{Name: "proxy", ID: "p1", StartedAt: h.clock.Now()}})
	h.settle()
	st := h.m.Status("sc1", "proxy")
	if st.Kill == nil || st.Kill.Message != "Container proxy failed liveness probe, will be restarted" {
		t.Fatalf("sidecar: %+v (kill %+v); a sidecar is restarted whatever the pod's policy", st, st.Kill)
	}
}
