package stages

import (
	"reflect"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/podline/podline/pleg"
)

func TestPlanSandbox(t *testing.T) {
	f := func(name string, pod *v1.Pod, rt *pleg.Pod, want SandboxPlan) {
		t.Helper()
		got := PlanSandbox(pod, rt, time.Time{}, baseTime)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\n got %+v\nwant %+v", name, got, want)
		}
	}
	always := unitPod()
	never := unitPod(withRestartPolicy(v1.RestartPolicyNever))
	onFailure := unitPod(withRestartPolicy(v1.RestartPolicyOnFailure))

	f("nothing in the runtime: create the first sandbox",
		always, nil, SandboxPlan{Create: true})
	f("runtime entry without sandboxes: create",
		always, rtPod(nil), SandboxPlan{Create: true})
	f("ready sandbox: nothing to do",
		always, rtPod(sbList(rtReady("sb0", 0)), rtRunning("c0", "sb0", "app", 0)), SandboxPlan{})
	f("sandbox died: recreate with the next attempt",
		always, rtPod(sbList(rtDead("sb3", 3)), rtExited("c0", "sb3", "app", 0, 137, baseTime)),
		SandboxPlan{Create: true, Attempt: 4})
	f("OnFailure sandbox died with a failed container: recreate",
		onFailure, rtPod(sbList(rtDead("sb0", 0)), rtExited("c0", "sb0", "app", 0, 1, baseTime)),
		SandboxPlan{Create: true, Attempt: 1})
	f("Never pod whose sandbox died after running containers stays dead",
		never, rtPod(sbList(rtDead("sb0", 0)), rtRunning("c0", "sb0", "app", 0)), SandboxPlan{})
	f("Never pod whose sandbox died before any container: recreate",
		never, rtPod(sbList(rtDead("sb0", 0))), SandboxPlan{Create: true, Attempt: 1})

	f("finished OnFailure pod: stop its ready sandbox",
		onFailure, rtPod(sbList(rtReady("sb0", 0)), rtExited("c0", "sb0", "app", 0, 0, baseTime)),
		SandboxPlan{Stop: []string{"sb0"}, Finished: true})
	f("finished pod whose sandbox is already stopped: nothing to stop, no recreation",
		onFailure, rtPod(sbList(rtDead("sb0", 0)), rtExited("c0", "sb0", "app", 0, 0, baseTime)),
		SandboxPlan{Finished: true})
	f("finished Never pod (failed exit): stop",
		never, rtPod(sbList(rtReady("sb0", 0)), rtExited("c0", "sb0", "app", 0, 2, baseTime)),
		SandboxPlan{Stop: []string{"sb0"}, Finished: true})

	f("older sandboxes: stop a ready duplicate, remove an empty dead one, keep one holding containers",
		always, rtPod(sbList(rtReady("sb3", 3), rtReady("sb2", 2), rtDead("sb1", 1), rtDead("sb0", 0)),
			rtRunning("c1", "sb3", "app", 1), rtExited("c0", "sb0", "app", 0, 1, baseTime)),
		SandboxPlan{Stop: []string{"sb2"}, Remove: []string{"sb1"}})
	f("finished pod with an older ready duplicate: both stopped, stale one first",
		onFailure, rtPod(sbList(rtReady("sb1", 1), rtReady("sb0", 0)),
			rtExited("c1", "sb1", "app", 1, 0, baseTime)),
		SandboxPlan{Stop: []string{"sb0", "sb1"}, Finished: true})
	f("recreation after a death also removes an empty older sandbox",
		always, rtPod(sbList(rtDead("sb1", 1), rtDead("sb0", 0))),
		SandboxPlan{Create: true, Attempt: 2, Remove: []string{"sb0"}})
}

func TestPodFinished(t *testing.T) {
	f := func(name string, pod *v1.Pod, rt *pleg.Pod, want bool) {
		t.Helper()
		if got := PodFinished(pod, rt); got != want {
			t.Errorf("%s: PodFinished = %v, want %v", name, got, want)
		}
	}
	two := func(rp v1.RestartPolicy) *v1.Pod { return unitPod(withRestartPolicy(rp), withApps("a", "b")) }
	sb := sbList(rtReady("sb1", 1))
	done := func(code int32) []*pleg.Container {
		return []*pleg.Container{rtExited("a1", "sb1", "a", 0, 0, baseTime), rtExited("b1", "sb1", "b", 0, code, baseTime)}
	}

	f("no runtime state", two(v1.RestartPolicyNever), nil, false)
	f("no sandbox", two(v1.RestartPolicyNever), rtPod(nil), false)
	f("no app containers in the spec", unitPod(withRestartPolicy(v1.RestartPolicyNever), withApps()), rtPod(sb), false)
	f("Always never finishes", two(v1.RestartPolicyAlways), rtPod(sb, done(0)...), false)
	f("Never, all exited (one failed)", two(v1.RestartPolicyNever), rtPod(sb, done(3)...), true)
	f("Never, all exited 0", two(v1.RestartPolicyNever), rtPod(sb, done(0)...), true)
	f("OnFailure, all exited 0", two(v1.RestartPolicyOnFailure), rtPod(sb, done(0)...), true)
	f("OnFailure, one failed: it restarts", two(v1.RestartPolicyOnFailure), rtPod(sb, done(1)...), false)
	f("Never, one still running", two(v1.RestartPolicyNever),
		rtPod(sb, rtRunning("b1", "sb1", "b", 0), rtExited("a1", "sb1", "a", 0, 0, baseTime)), false)
	f("Never, one not created yet", two(v1.RestartPolicyNever),
		rtPod(sb, rtExited("a1", "sb1", "a", 0, 0, baseTime)), false)
	f("Never, one only exited in an older sandbox", two(v1.RestartPolicyNever),
		rtPod(sbList(rtReady("sb1", 1), rtDead("sb0", 0)),
			rtExited("a1", "sb1", "a", 0, 0, baseTime), rtExited("b0", "sb0", "b", 0, 0, baseTime)), false)

	initPod := func(rp v1.RestartPolicy) *v1.Pod { return unitPod(withRestartPolicy(rp), withInits("setup")) }
	f("Never, init container failed", initPod(v1.RestartPolicyNever),
		rtPod(sb, rtExited("i1", "sb1", "setup", 0, 1, baseTime)), true)
	f("OnFailure, init container failed: it restarts", initPod(v1.RestartPolicyOnFailure),
		rtPod(sb, rtExited("i1", "sb1", "setup", 0, 1, baseTime)), false)
	f("Never, init container succeeded, app not started", initPod(v1.RestartPolicyNever),
		rtPod(sb, rtExited("i1", "sb1", "setup", 0, 0, baseTime)), false)
	f("Never, init container failed in an older sandbox only", initPod(v1.RestartPolicyNever),
		rtPod(sbList(rtReady("sb1", 1), rtDead("sb0", 0)), rtExited("i0", "sb0", "setup", 0, 1, baseTime)), false)
}
