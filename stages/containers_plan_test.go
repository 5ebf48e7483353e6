package stages

import (
	"reflect"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/podline/podline/pleg"
	"github.com/podline/podline/podspec"
)

// startSummary is a StartAction without its spec pointer.
type startSummary struct {
	Name    string
	Init    bool
	Attempt uint32
}

type planSummary struct {
	Kill       []KillAction
	Start      []startSummary
	Remove     []string
	Waiting    map[string]Waiting
	RetryAfter time.Duration
}

// summarize flattens a plan for comparison and checks that every start
// points at the spec of the pod it was planned for.
func summarize(t *testing.T, pod *v1.Pod, p ContainerPlan) planSummary {
	t.Helper()
	s := planSummary{Kill: p.Kill, Remove: p.Remove, Waiting: p.Waiting, RetryAfter: p.RetryAfter}
	for _, a := range p.Start {
		specs := pod.Spec.Containers
		if a.Init {
			specs = pod.Spec.InitContainers
		}
		found := false
		for i := range specs {
			found = found || a.Spec == &specs[i]
		}
		if !found {
			t.Errorf("start of %q (init=%v) does not point into the pod's spec", a.Spec.Name, a.Init)
		}
		s.Start = append(s.Start, startSummary{a.Spec.Name, a.Init, a.Attempt})
	}
	return s
}

func newCrashBackoff() *Backoff {
	b := NewBackoff(crashBackoffBase, crashBackoffMax)
	return &b
}

func TestPlanContainers(t *testing.T) {
	f := func(name string, pod *v1.Pod, rt *pleg.Pod, crash *Backoff, now time.Time, want planSummary) {
		t.Helper()
		if crash == nil {
			crash = newCrashBackoff()
		}
		got := summarize(t, pod, PlanContainers(pod, rt, crash, nil, time.Time{}, now))
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\n got %+v\nwant %+v", name, got, want)
		}
	}
	now := baseTime.Add(time.Hour)
	pod := unitPod()
	app := &pod.Spec.Containers[0]
	sb := sbList(rtReady("sb1", 1))
	creating := func(names ...string) map[string]Waiting {
		m := make(map[string]Waiting)
		for _, n := range names {
			m[n] = Waiting{Reason: "ContainerCreating"}
		}
		return m
	}

	f("no runtime state", pod, nil, nil, now, planSummary{})
	f("no sandbox yet", pod, rtPod(nil), nil, now, planSummary{})
	f("sandbox not ready", pod, rtPod(sbList(rtDead("sb1", 1))), nil, now, planSummary{})

	two := unitPod(withApps("a", "b"))
	f("fresh sandbox: start every app container at attempt 0", two, rtPod(sb), nil, now, planSummary{
		Start:   []startSummary{{"a", false, 0}, {"b", false, 0}},
		Waiting: creating("a", "b"),
	})
	f("running with the current spec hash: nothing to do",
		pod, rtPod(sb, withHash(rtRunning("c1", "sb1", "app", 0), app)), nil, now, planSummary{})
	f("running without a recorded hash: left alone",
		pod, rtPod(sb, rtRunning("c1", "sb1", "app", 0)), nil, now, planSummary{})

	changed := unitPod()
	changed.Spec.Containers[0].Image = "busybox:1.37"
	f("running with an outdated spec hash: kill it, start nothing in the same pass",
		changed, rtPod(sb, withHash(rtRunning("c1", "sb1", "app", 0), app)), nil, now, planSummary{
			Kill: []KillAction{{ID: "c1", Name: "app", SandboxID: "sb1", Reason: "spec changed"}},
		})
	resized := unitPod(func(p *v1.Pod) { p.Spec.Containers[0].Resources = testResources("", "", "", "128Mi") })
	f("resized: kill it, the restart applies the new resources",
		resized, rtPod(sb, withHash(rtRunning("c1", "sb1", "app", 0), app)), nil, now, planSummary{
			Kill: []KillAction{{ID: "c1", Name: "app", SandboxID: "sb1", Reason: "spec changed"}},
		})
	probed := unitPod(func(p *v1.Pod) {
		p.Spec.Containers[0].LivenessProbe = &v1.Probe{ProbeHandler: v1.ProbeHandler{Exec: &v1.ExecAction{Command: []string{"true"}}}}
		p.Spec.Containers[0].TerminationMessagePath = v1.TerminationMessagePathDefault
	})
	f("fields that cannot change on a running pod differ: nothing to do",
		probed, rtPod(sb, withHash(rtRunning("c1", "sb1", "app", 0), app)), nil, now, planSummary{})
	legacy := rtRunning("c1", "sb1", "app", 0)
	legacy.Hash = podspec.LegacyHashContainer(app)
	f("running with the hash an earlier podline stored: left running after the upgrade",
		pod, rtPod(sb, legacy), nil, now, planSummary{})
	f("running with the earlier hash, image changed: kill it",
		changed, rtPod(sb, legacy), nil, now, planSummary{
			Kill: []KillAction{{ID: "c1", Name: "app", SandboxID: "sb1", Reason: "spec changed"}},
		})
	// A stop would leave it created (containerd stops only running
	// tasks): it is removed and made again with its own attempt, since
	// it never ran.
	f("created but never started: removed, made again with its attempt",
		pod, rtPod(sb, rtCreated("c1", "sb1", "app", 0)), nil, now, planSummary{
			Remove: []string{"c1"}, Start: []startSummary{{"app", false, 0}}, Waiting: creating("app"),
		})
	f("created but never started after a restart: keeps its attempt",
		pod, rtPod(sb, rtCreated("c2", "sb1", "app", 3), rtExited("c1", "sb1", "app", 2, 1, now.Add(-time.Hour))), nil, now, planSummary{
			Remove: []string{"c2"}, Start: []startSummary{{"app", false, 3}}, Waiting: creating("app"),
		})
	unknown := rtRunning("c1", "sb1", "app", 0)
	unknown.State = pleg.ContainerUnknown
	f("unknown state: wait for the runtime to tell", pod, rtPod(sb, unknown), nil, now, planSummary{})

	f("exited under Always, first failure: restart at once with the next attempt",
		pod, rtPod(sb, rtExited("c1", "sb1", "app", 0, 1, now.Add(-time.Second))), nil, now, planSummary{
			Start: []startSummary{{"app", false, 1}},
		})
	f("exited 0 under Always: restart too",
		pod, rtPod(sb, rtExited("c1", "sb1", "app", 2, 0, now.Add(-time.Second))), nil, now, planSummary{
			Start: []startSummary{{"app", false, 3}},
		})
	f("exited under Never: stays exited",
		unitPod(withRestartPolicy(v1.RestartPolicyNever)),
		rtPod(sb, rtExited("c1", "sb1", "app", 0, 1, now)), nil, now, planSummary{})
	f("exited 0 under OnFailure: stays exited",
		unitPod(withRestartPolicy(v1.RestartPolicyOnFailure)),
		rtPod(sb, rtExited("c1", "sb1", "app", 0, 0, now)), nil, now, planSummary{})
	f("exited 1 under OnFailure: restart",
		unitPod(withRestartPolicy(v1.RestartPolicyOnFailure)),
		rtPod(sb, rtExited("c1", "sb1", "app", 0, 1, now)), nil, now, planSummary{
			Start: []startSummary{{"app", false, 1}},
		})
	f("next attempt counts instances in older sandboxes",
		pod, rtPod(sbList(rtReady("sb1", 1), rtDead("sb0", 0)), rtExited("c4", "sb0", "app", 4, 137, now)),
		nil, now, planSummary{
			Start:   []startSummary{{"app", false, 5}},
			Waiting: creating("app"),
		})
}

func TestPlanContainersCrashLoopBackOff(t *testing.T) {
	f := func(name string, pod *v1.Pod, rt *pleg.Pod, restarts []time.Time, now time.Time, want planSummary) {
		t.Helper()
		crash := newCrashBackoff()
		for _, at := range restarts {
			for i := range pod.Spec.Containers {
				crash.Next(pod.Spec.Containers[i].Name, at)
			}
		}
		got := summarize(t, pod, PlanContainers(pod, rt, crash, nil, time.Time{}, now))
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\n got %+v\nwant %+v", name, got, want)
		}
	}
	pod := unitPod()
	sb := sbList(rtReady("sb1", 1))
	// The container was restarted (attempt 1) at baseTime, which armed a
	// 10s back-off, and exited again 5s later.
	exitedAt := baseTime.Add(5 * time.Second)
	rt := rtPod(sb, rtExited("c1", "sb1", "app", 1, 1, exitedAt))
	loop := func(delay string) map[string]Waiting {
		return map[string]Waiting{"app": {Reason: "CrashLoopBackOff",
			Message: "back-off " + delay + " restarting failed container=app pod=web_default(uid-web)"}}
	}

	f("inside the back-off: wait, and come back when it expires",
		pod, rt, []time.Time{baseTime}, exitedAt.Add(time.Second),
		planSummary{Waiting: loop("10s"), RetryAfter: 9 * time.Second})
	f("back-off expired: restart",
		pod, rt, []time.Time{baseTime}, exitedAt.Add(10*time.Second),
		planSummary{Start: []startSummary{{"app", false, 2}}})
	f("third restart waits 20s",
		pod, rt, []time.Time{baseTime.Add(-time.Minute), baseTime}, exitedAt.Add(15*time.Second),
		planSummary{Waiting: loop("20s"), RetryAfter: 5 * time.Second})
	f("ran for more than 10 minutes since the last restart: restart at once",
		pod, rtPod(sb, rtExited("c1", "sb1", "app", 1, 1, baseTime.Add(10*time.Minute+time.Second))),
		[]time.Time{baseTime}, baseTime.Add(10*time.Minute+2*time.Second),
		planSummary{Start: []startSummary{{"app", false, 2}}})
	noFinish := rtExited("c1", "sb1", "app", 1, 1, time.Time{})
	f("exit time unknown: the back-off counts from now",
		pod, rtPod(sb, noFinish), []time.Time{baseTime}, baseTime.Add(time.Second),
		planSummary{Waiting: loop("10s"), RetryAfter: 10 * time.Second})

	two := unitPod(withApps("a", "b"))
	f("two containers backing off: retry at the earliest expiry",
		two, rtPod(sb, rtExited("b1", "sb1", "b", 1, 1, baseTime.Add(8*time.Second)),
			rtExited("a1", "sb1", "a", 1, 1, baseTime.Add(2*time.Second))),
		[]time.Time{baseTime}, baseTime.Add(9*time.Second),
		planSummary{
			Waiting: map[string]Waiting{
				"a": {Reason: "CrashLoopBackOff", Message: "back-off 10s restarting failed container=a pod=web_default(uid-web)"},
				"b": {Reason: "CrashLoopBackOff", Message: "back-off 10s restarting failed container=b pod=web_default(uid-web)"},
			},
			RetryAfter: 3 * time.Second,
		})
}

func TestPlanContainersPastDeadline(t *testing.T) {
	f := func(name string, pod *v1.Pod, rt *pleg.Pod, now time.Time, want planSummary) {
		t.Helper()
		got := summarize(t, pod, PlanContainers(pod, rt, newCrashBackoff(), nil, baseTime, now))
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\n got %+v\nwant %+v", name, got, want)
		}
	}
	kill := func(id, sandboxID, name string) KillAction {
		return KillAction{ID: id, Name: name, SandboxID: sandboxID, Reason: reasonDeadlineKill}
	}
	before, after := baseTime.Add(59*time.Second), baseTime.Add(60*time.Second)
	sb := sbList(rtReady("sb2", 2), rtDead("sb1", 1))
	pod := unitPod(withDeadline(60), withInits("setup"), withApps("a", "b"))
	a, b := &pod.Spec.Containers[0], &pod.Spec.Containers[1]
	// a runs; b crashed and would restart at once (Always, no back-off yet).
	rt := rtPod(sb, withHash(rtRunning("a1", "sb2", "a", 0), a), withHash(rtExited("b1", "sb2", "b", 0, 1, before), b),
		rtExited("i1", "sb2", "setup", 0, 0, baseTime))

	f("before the deadline: the restart goes ahead", pod, rt, before,
		planSummary{Start: []startSummary{{"b", false, 1}}})
	f("at the deadline: everything stops and nothing starts", pod, rt, after,
		planSummary{Kill: []KillAction{kill("a1", "sb2", "a")}})
	never := unitPod(withDeadline(60), withRestartPolicy(v1.RestartPolicyNever), withApps("a", "b"))
	f("whatever the restart policy", never, rt, after,
		planSummary{Kill: []KillAction{kill("a1", "sb2", "a")}})
	f("every running container, a stray and one created but not started too", pod,
		rtPod(sb, withHash(rtRunning("a2", "sb2", "a", 1), a), rtCreated("b1", "sb2", "b", 0),
			rtRunning("old", "sb1", "gone", 0), rtRunning("i1", "sb2", "setup", 0)), after,
		planSummary{Kill: []KillAction{kill("a2", "sb2", "a"), kill("b1", "sb2", "b"), kill("old", "sb1", "gone"), kill("i1", "sb2", "setup")}})
	f("nothing left running: nothing to do but the usual cleanup", pod,
		rtPod(sb, rtExited("a2", "sb2", "a", 1, 143, after), rtExited("a1", "sb2", "a", 0, 1, before)), after,
		planSummary{Remove: []string{"a1"}})
	f("still initializing: the init container stops, no app container starts", pod,
		rtPod(sb, rtRunning("i1", "sb2", "setup", 0)), after,
		planSummary{Kill: []KillAction{kill("i1", "sb2", "setup")}})
	lowered := pod.DeepCopy()
	lowered.Spec.ActiveDeadlineSeconds = ptrOf(int64(30))
	f("a lowered deadline counts at once", lowered, rt, before,
		planSummary{Kill: []KillAction{kill("a1", "sb2", "a")}})
}

func TestPlanContainersInit(t *testing.T) {
	f := func(name string, pod *v1.Pod, rt *pleg.Pod, crash *Backoff, want planSummary) {
		t.Helper()
		if crash == nil {
			crash = newCrashBackoff()
		}
		got := summarize(t, pod, PlanContainers(pod, rt, crash, nil, time.Time{}, baseTime.Add(time.Hour)))
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\n got %+v\nwant %+v", name, got, want)
		}
	}
	pod := func(rp v1.RestartPolicy) *v1.Pod {
		return unitPod(withRestartPolicy(rp), withInits("first", "second"), withApps("a", "b"))
	}
	always := pod(v1.RestartPolicyAlways)
	first := &always.Spec.InitContainers[0]
	sb := sbList(rtReady("sb1", 1))
	done := baseTime.Add(30 * time.Minute)
	initializing := map[string]Waiting{"a": {Reason: "PodInitializing"}, "b": {Reason: "PodInitializing"}}

	f("nothing ran: start the first init container only", always, rtPod(sb), nil, planSummary{
		Start:   []startSummary{{"first", true, 0}},
		Waiting: initializing,
	})
	f("first done: start the second", always, rtPod(sb, rtExited("i1", "sb1", "first", 0, 0, done)), nil, planSummary{
		Start:   []startSummary{{"second", true, 0}},
		Waiting: initializing,
	})
	f("first running: wait for it", always, rtPod(sb, withHash(rtRunning("i1", "sb1", "first", 0), first)), nil,
		planSummary{Waiting: initializing})
	changed := pod(v1.RestartPolicyAlways)
	changed.Spec.InitContainers[0].Image = "busybox:1.37"
	f("first running an outdated spec: kill it", changed, rtPod(sb, withHash(rtRunning("i1", "sb1", "first", 0), first)), nil,
		planSummary{
			Kill:    []KillAction{{ID: "i1", Name: "first", SandboxID: "sb1", Reason: "spec changed"}},
			Waiting: initializing,
		})
	f("first created but never started: removed, made again", always, rtPod(sb, rtCreated("i1", "sb1", "first", 0)), nil,
		planSummary{
			Remove:  []string{"i1"},
			Start:   []startSummary{{"first", true, 0}},
			Waiting: initializing,
		})
	f("first failed under Always: restart it (attempt 1) before anything else", always,
		rtPod(sb, rtExited("i1", "sb1", "first", 0, 1, done)), nil, planSummary{
			Start:   []startSummary{{"first", true, 1}},
			Waiting: initializing,
		})
	now := baseTime.Add(time.Hour)
	crash := newCrashBackoff()
	crash.Next("first", now.Add(-2*time.Second))
	f("first failed inside its back-off: CrashLoopBackOff", always,
		rtPod(sb, rtExited("i1", "sb1", "first", 1, 1, now.Add(-time.Second))), crash, planSummary{
			Waiting: map[string]Waiting{
				"first": {Reason: "CrashLoopBackOff", Message: "back-off 10s restarting failed container=first pod=web_default(uid-web)"},
				"a":     {Reason: "PodInitializing"}, "b": {Reason: "PodInitializing"},
			},
			RetryAfter: 9 * time.Second,
		})
	f("first failed under Never: the pod failed, nothing starts", pod(v1.RestartPolicyNever),
		rtPod(sb, rtExited("i1", "sb1", "first", 0, 1, done)), nil, planSummary{Waiting: initializing})
	both := []*pleg.Container{rtExited("i2", "sb1", "second", 0, 0, done), rtExited("i1", "sb1", "first", 0, 0, done)}
	f("all init containers done: start the app containers", always, rtPod(sb, both...), nil, planSummary{
		Start:   []startSummary{{"a", false, 0}, {"b", false, 0}},
		Waiting: map[string]Waiting{"a": {Reason: "ContainerCreating"}, "b": {Reason: "ContainerCreating"}},
	})
	f("an app container exists: init phase over even with init containers gone", always,
		rtPod(sb, withHash(rtRunning("a1", "sb1", "a", 0), &always.Spec.Containers[0])), nil, planSummary{
			Start:   []startSummary{{"b", false, 0}},
			Waiting: map[string]Waiting{"b": {Reason: "ContainerCreating"}},
		})
	f("new sandbox: init containers run again, attempts continue", always,
		rtPod(sbList(rtReady("sb2", 2), rtDead("sb1", 1)), both...), nil, planSummary{
			Start:   []startSummary{{"first", true, 1}},
			Waiting: initializing,
		})
}

func TestPlanContainersStraysAndGC(t *testing.T) {
	f := func(name string, pod *v1.Pod, rt *pleg.Pod, want planSummary) {
		t.Helper()
		got := summarize(t, pod, PlanContainers(pod, rt, newCrashBackoff(), nil, time.Time{}, baseTime.Add(time.Hour)))
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\n got %+v\nwant %+v", name, got, want)
		}
	}
	pod := unitPod()
	app := &pod.Spec.Containers[0]
	sb := sbList(rtReady("sb1", 1), rtDead("sb0", 0))
	at := baseTime.Add(time.Minute)

	f("running in a replaced sandbox: kill it before starting its successor",
		pod, rtPod(sb, withHash(rtRunning("c0", "sb0", "app", 0), app)), planSummary{
			Kill:    []KillAction{{ID: "c0", Name: "app", SandboxID: "sb0", Reason: "its sandbox was replaced"}},
			Waiting: map[string]Waiting{"app": {Reason: "ContainerCreating"}},
		})
	f("created in a replaced sandbox: kill it too",
		pod, rtPod(sb, rtCreated("c0", "sb0", "app", 0)), planSummary{
			Kill:    []KillAction{{ID: "c0", Name: "app", SandboxID: "sb0", Reason: "its sandbox was replaced"}},
			Waiting: map[string]Waiting{"app": {Reason: "ContainerCreating"}},
		})
	f("running but no longer in the spec: kill it",
		pod, rtPod(sb, rtRunning("x1", "sb1", "sidecar", 0), withHash(rtRunning("c1", "sb1", "app", 0), app)), planSummary{
			Kill: []KillAction{{ID: "x1", Name: "sidecar", SandboxID: "sb1", Reason: "not in the pod spec"}},
		})
	f("two running instances of one name: kill the older",
		pod, rtPod(sb, withHash(rtRunning("c2", "sb1", "app", 2), app), withHash(rtRunning("c1", "sb1", "app", 1), app)), planSummary{
			Kill: []KillAction{{ID: "c1", Name: "app", SandboxID: "sb1", Reason: "a newer instance exists"}},
		})
	f("dead instances beyond the newest are removed, in any sandbox",
		pod, rtPod(sb, rtExited("c2", "sb1", "app", 2, 1, at), rtExited("c1", "sb1", "app", 1, 1, at),
			rtExited("c0", "sb0", "app", 0, 1, at)), planSummary{
			Remove: []string{"c1", "c0"},
			Start:  []startSummary{{"app", false, 3}},
		})
	two := unitPod(withApps("a", "b"))
	f("GC counts per name",
		two, rtPod(sb, rtExited("b1", "sb1", "b", 1, 0, at), rtExited("a1", "sb1", "a", 1, 0, at),
			rtExited("b0", "sb1", "b", 0, 0, at)), planSummary{
			Remove: []string{"b0"},
			Start:  []startSummary{{"a", false, 2}, {"b", false, 2}},
		})
	f("an exited instance in the current sandbox is the newest: nothing removed",
		pod, rtPod(sb, rtExited("c1", "sb1", "app", 1, 0, at)), planSummary{
			Start: []startSummary{{"app", false, 2}},
		})
}

// After a restart the running instance is the newest; the exited one
// before it is what the status shows as lastState (containerStatus reads
// it with Previous), as the kubelet keeps one dead instance per container.
func TestPlanContainersKeepsLastTerminated(t *testing.T) {
	pod := unitPod()
	rt := rtPod(sbList(rtReady("sb1", 1)),
		withHash(rtRunning("c1", "sb1", "app", 1), &pod.Spec.Containers[0]),
		rtExited("c0", "sb1", "app", 0, 1, baseTime))
	plan := PlanContainers(pod, rt, newCrashBackoff(), nil, time.Time{}, baseTime.Add(time.Hour))
	if len(plan.Remove) != 0 {
		t.Errorf("Remove = %v, want none: c0 is the last terminated instance of app", plan.Remove)
	}
}

// ContainerPlan promises that starts only come when there is nothing to
// kill. A stray found while the init containers are still running must
// not leave a start in the plan.
func TestPlanContainersNoStartBesideKill(t *testing.T) {
	pod := unitPod(withInits("setup"))
	rt := rtPod(sbList(rtReady("sb1", 1), rtDead("sb0", 0)),
		withHash(rtRunning("c0", "sb0", "app", 0), &pod.Spec.Containers[0]))
	plan := PlanContainers(pod, rt, newCrashBackoff(), nil, time.Time{}, baseTime)
	if len(plan.Kill) != 1 || len(plan.Start) != 0 {
		t.Errorf("plan kills %d and starts %d containers, want 1 kill and no start", len(plan.Kill), len(plan.Start))
	}
}
