package stages

import (
	"reflect"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/podline/podline/pleg"
)

// withSidecars makes the named init containers sidecars (restartPolicy
// Always); apply after withInits.
func withSidecars(names ...string) func(*v1.Pod) {
	return func(p *v1.Pod) {
		for i := range p.Spec.InitContainers {
			for _, n := range names {
				if p.Spec.InitContainers[i].Name == n {
					p.Spec.InitContainers[i].RestartPolicy = ptrOf(v1.ContainerRestartPolicyAlways)
				}
			}
		}
	}
}

// testProbes is a ProbeState: containers are started and ready unless
// listed.
type testProbes struct{ notStarted, notReady []string }

func has(list []string, name string) bool {
	for _, n := range list {
		if n == name {
			return true
		}
	}
	return false
}

func (p testProbes) Started(name string) bool    { return !has(p.notStarted, name) }
func (p testProbes) Ready(name string) bool      { return !has(p.notReady, name) }
func (p testProbes) Unhealthy(string) *ProbeKill { return nil }

func TestPlanContainersSidecars(t *testing.T) {
	now := baseTime.Add(time.Hour)
	f := func(name string, pod *v1.Pod, rt *pleg.Pod, probes ProbeState, crash *Backoff, want planSummary) {
		t.Helper()
		if crash == nil {
			crash = newCrashBackoff()
		}
		got := summarize(t, pod, PlanContainers(pod, rt, crash, probes, time.Time{}, now))
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\n got %+v\nwant %+v", name, got, want)
		}
	}
	mk := func(rp v1.RestartPolicy) *v1.Pod {
		return unitPod(withRestartPolicy(rp), withInits("proxy", "setup"), withSidecars("proxy"), withApps("app"))
	}
	always, never, onFailure := mk(v1.RestartPolicyAlways), mk(v1.RestartPolicyNever), mk(v1.RestartPolicyOnFailure)
	proxy, app := &always.Spec.InitContainers[0], &always.Spec.Containers[0]
	sb := sbList(rtReady("sb1", 1))
	running := func(pod *v1.Pod, id, name string, attempt uint32) *pleg.Container {
		c := rtRunning(id, "sb1", name, attempt)
		for _, list := range [][]v1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
			for i := range list {
				if list[i].Name == name {
					withHash(c, &list[i])
				}
			}
		}
		return c
	}
	exited := func(id, name string, attempt uint32, code int32) *pleg.Container {
		return rtExited(id, "sb1", name, attempt, code, now.Add(-time.Second))
	}
	initializing := map[string]Waiting{"app": {Reason: "PodInitializing"}}
	creating := map[string]Waiting{"app": {Reason: "ContainerCreating"}}
	loop := func(name string, extra map[string]Waiting) map[string]Waiting {
		m := map[string]Waiting{name: {Reason: ReasonCrashLoopBackOff,
			Message: "back-off 10s restarting failed container=" + name + " pod=web_default(uid-web)"}}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	inBackoff := func() *Backoff {
		b := newCrashBackoff()
		b.Next("proxy", now.Add(-2*time.Second))
		return b
	}
	kill := func(id, name, reason string) KillAction {
		return KillAction{ID: id, Name: name, SandboxID: "sb1", Reason: reason}
	}

	// Start-up: the sidecar starts in its place, the next init container
	// as soon as it has started.
	f("fresh sandbox: the sidecar starts first, alone", always, rtPod(sb), nil, nil, planSummary{
		Start: []startSummary{{"proxy", true, 0}}, Waiting: initializing,
	})
	f("sidecar running: the next init container starts without waiting for it to exit",
		always, rtPod(sb, running(always, "p1", "proxy", 0)), nil, nil, planSummary{
			Start: []startSummary{{"setup", true, 0}}, Waiting: initializing,
		})
	f("sidecar running, its startup probe not passed yet: wait",
		always, rtPod(sb, running(always, "p1", "proxy", 0)), testProbes{notStarted: []string{"proxy"}}, nil,
		planSummary{Waiting: initializing})
	f("sidecar running, its startup probe passed, not ready: started is enough",
		always, rtPod(sb, running(always, "p1", "proxy", 0)), testProbes{notReady: []string{"proxy"}}, nil,
		planSummary{Start: []startSummary{{"setup", true, 0}}, Waiting: initializing})
	f("sidecar running, init container running: wait for the init container",
		always, rtPod(sb, running(always, "s1", "setup", 0), running(always, "p1", "proxy", 0)), nil, nil,
		planSummary{Waiting: initializing})
	f("sidecar running, init container done: the app starts, the sidecar runs on",
		always, rtPod(sb, exited("s1", "setup", 0, 0), running(always, "p1", "proxy", 0)), nil, nil,
		planSummary{Start: []startSummary{{"app", false, 0}}, Waiting: creating})
	f("sidecar created but never started: replaced",
		always, rtPod(sb, rtCreated("p1", "sb1", "proxy", 0)), nil, nil,
		planSummary{Remove: []string{"p1"}, Start: []startSummary{{"proxy", true, 0}}, Waiting: initializing})

	last := unitPod(withInits("setup", "proxy"), withSidecars("proxy"))
	f("sidecar last, not started yet: the app waits",
		last, rtPod(sb, running(last, "p1", "proxy", 0), exited("s1", "setup", 0, 0)),
		testProbes{notStarted: []string{"proxy"}}, nil, planSummary{Waiting: initializing})
	f("sidecar last, started: the app starts",
		last, rtPod(sb, running(last, "p1", "proxy", 0), exited("s1", "setup", 0, 0)), nil, nil,
		planSummary{Start: []startSummary{{"app", false, 0}}, Waiting: creating})

	// A sidecar that exits during initialization is restarted, whatever
	// its exit code and the pod's restart policy.
	f("sidecar crashed during init: restarted before anything else",
		always, rtPod(sb, exited("p1", "proxy", 0, 1)), nil, nil, planSummary{
			Start: []startSummary{{"proxy", true, 1}}, Waiting: initializing,
		})
	f("sidecar exited 0 during init, pod Never: restarted all the same",
		never, rtPod(sb, exited("p1", "proxy", 0, 0)), nil, nil, planSummary{
			Start: []startSummary{{"proxy", true, 1}}, Waiting: initializing,
		})
	f("sidecar crashed inside its back-off during init: CrashLoopBackOff",
		always, rtPod(sb, exited("p1", "proxy", 1, 1)), nil, inBackoff(), planSummary{
			Waiting: loop("proxy", initializing), RetryAfter: 9 * time.Second,
		})
	f("sidecar crashed while the next init container runs: restarted, the init container left alone",
		never, rtPod(sb, running(never, "s1", "setup", 0), exited("p1", "proxy", 0, 137)), nil, nil, planSummary{
			Start: []startSummary{{"proxy", true, 1}}, Waiting: initializing,
		})
	f("sidecar in back-off, the init container after it done: the app starts",
		always, rtPod(sb, exited("s1", "setup", 0, 0), exited("p1", "proxy", 1, 1)), nil, inBackoff(), planSummary{
			Start: []startSummary{{"app", false, 0}}, Waiting: loop("proxy", creating), RetryAfter: 9 * time.Second,
		})

	// Beside the app containers.
	f("sidecar and app running: nothing to do",
		always, rtPod(sb, running(always, "a1", "app", 0), exited("s1", "setup", 0, 0), running(always, "p1", "proxy", 0)),
		nil, nil, planSummary{})
	f("sidecar crashed beside the app: restarted (attempt 1)",
		always, rtPod(sb, running(always, "a1", "app", 0), exited("p1", "proxy", 0, 1)), nil, nil,
		planSummary{Start: []startSummary{{"proxy", true, 1}}})
	f("sidecar crashed again beside the app, inside its back-off: CrashLoopBackOff, the app left alone",
		always, rtPod(sb, running(always, "a1", "app", 0), exited("p2", "proxy", 1, 1)), nil, inBackoff(),
		planSummary{Waiting: loop("proxy", nil), RetryAfter: 9 * time.Second})
	f("sidecar gone beside the app (removed): started again",
		always, rtPod(sb, running(always, "a1", "app", 0)), nil, nil,
		planSummary{Start: []startSummary{{"proxy", true, 0}}})
	f("sidecar crashed beside the app of a Never pod: restarted",
		never, rtPod(sb, running(never, "a1", "app", 0), exited("p1", "proxy", 0, 2)), nil, nil,
		planSummary{Start: []startSummary{{"proxy", true, 1}}})
	changed := mk(v1.RestartPolicyAlways)
	changed.Spec.InitContainers[0].Image = "envoy:2"
	f("sidecar running an outdated spec beside the app: replaced",
		changed, rtPod(sb, withHash(rtRunning("a1", "sb1", "app", 0), app), withHash(rtRunning("p1", "sb1", "proxy", 0), proxy)),
		nil, nil, planSummary{Kill: []KillAction{kill("p1", "proxy", "spec changed")}})
	f("app crashed, pod Always: the app restarts, the sidecar runs on",
		always, rtPod(sb, exited("a1", "app", 0, 1), running(always, "p1", "proxy", 0)), nil, nil,
		planSummary{Start: []startSummary{{"app", false, 1}}})

	// A pod that runs to completion ends with its app containers.
	f("Never, the app exited 0 while the sidecar runs: the sidecar is stopped, nothing restarts",
		never, rtPod(sb, exited("a1", "app", 0, 0), exited("s1", "setup", 0, 0), running(never, "p1", "proxy", 0)), nil, nil,
		planSummary{Kill: []KillAction{kill("p1", "proxy", reasonPodCompleted)}})
	f("Never, the app failed while the sidecar runs: the sidecar is stopped",
		never, rtPod(sb, exited("a1", "app", 0, 1), running(never, "p1", "proxy", 0)), nil, nil,
		planSummary{Kill: []KillAction{kill("p1", "proxy", reasonPodCompleted)}})
	f("OnFailure, the app exited 0: the sidecar is stopped",
		onFailure, rtPod(sb, exited("a1", "app", 0, 0), running(onFailure, "p1", "proxy", 0)), nil, nil,
		planSummary{Kill: []KillAction{kill("p1", "proxy", reasonPodCompleted)}})
	f("OnFailure, the app exited 1: the app restarts, the sidecar is left alone",
		onFailure, rtPod(sb, exited("a1", "app", 0, 1), running(onFailure, "p1", "proxy", 0)), nil, nil,
		planSummary{Start: []startSummary{{"app", false, 1}}})
	f("Never, the app done, the sidecar had crashed: not restarted",
		never, rtPod(sb, exited("a1", "app", 0, 0), exited("p1", "proxy", 0, 1)), nil, nil, planSummary{})
	two := unitPod(withRestartPolicy(v1.RestartPolicyNever), withInits("log", "setup", "proxy"), withSidecars("log", "proxy"))
	f("Never, the app done, two sidecars: stopped last in the spec first",
		two, rtPod(sb, exited("a1", "app", 0, 0), running(two, "p1", "proxy", 0), exited("s1", "setup", 0, 0),
			running(two, "l1", "log", 0)), nil, nil,
		planSummary{Kill: []KillAction{kill("p1", "proxy", reasonPodCompleted), kill("l1", "log", reasonPodCompleted)}})
	f("Never, an init container failed while the sidecar runs: the sidecar is stopped",
		never, rtPod(sb, exited("s1", "setup", 0, 1), running(never, "p1", "proxy", 0)), nil, nil,
		planSummary{Kill: []KillAction{kill("p1", "proxy", reasonInitFailed)}, Waiting: initializing})
}

func TestPodFinishedSidecars(t *testing.T) {
	at := baseTime.Add(time.Minute)
	sb := sbList(rtReady("sb1", 1))
	f := func(name string, rp v1.RestartPolicy, rt *pleg.Pod, want bool) {
		t.Helper()
		pod := unitPod(withRestartPolicy(rp), withInits("proxy", "setup"), withSidecars("proxy"))
		if got := PodFinished(pod, rt); got != want {
			t.Errorf("%s: PodFinished = %v, want %v", name, got, want)
		}
	}
	f("Never, the sidecar crashed beside the running app: not finished", v1.RestartPolicyNever,
		rtPod(sb, rtRunning("a1", "sb1", "app", 0), rtExited("p1", "sb1", "proxy", 0, 1, at)), false)
	f("Never, the sidecar crashed during init: not finished", v1.RestartPolicyNever,
		rtPod(sb, rtExited("p1", "sb1", "proxy", 0, 1, at)), false)
	f("Never, the app done, the sidecar still running: finished", v1.RestartPolicyNever,
		rtPod(sb, rtExited("a1", "sb1", "app", 0, 0, at), rtRunning("p1", "sb1", "proxy", 0)), true)
	f("Never, an ordinary init container failed: finished", v1.RestartPolicyNever,
		rtPod(sb, rtExited("s1", "sb1", "setup", 0, 1, at), rtRunning("p1", "sb1", "proxy", 0)), true)
	f("Always, the app done, the sidecar running: never finished", v1.RestartPolicyAlways,
		rtPod(sb, rtExited("a1", "sb1", "app", 0, 0, at), rtRunning("p1", "sb1", "proxy", 0)), false)
}
