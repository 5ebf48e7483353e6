package stages

import (
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/podline/podline/pleg"
)

func TestContainerStatus(t *testing.T) {
	spec := &v1.Container{Name: "app", Image: "busybox:1.36"}
	f := func(name string, rt *pleg.Pod, waiting map[string]Waiting, defaultWait string, want v1.ContainerStatus) {
		t.Helper()
		got := containerStatus(spec, rt, nil, waiting, defaultWait, "containerd", nil)
		if asJSON(got) != asJSON(want) {
			t.Errorf("%s:\n got %s\nwant %s", name, asJSON(got), asJSON(want))
		}
	}
	sb := sbList(rtReady("sb1", 1))
	yes, no := true, false
	base := v1.ContainerStatus{Name: "app", Image: "busybox:1.36"}
	with := func(mut func(*v1.ContainerStatus)) v1.ContainerStatus {
		s := base
		mut(&s)
		return s
	}
	run := rtRunning("c3", "sb1", "app", 3)
	exitedAt := baseTime.Add(time.Minute)
	failed := rtExited("c3", "sb1", "app", 3, 2, exitedAt)
	failed.Message = "disk full"
	terminated := func(c *pleg.Container, reason string) *v1.ContainerStateTerminated {
		return &v1.ContainerStateTerminated{ExitCode: c.ExitCode, Reason: reason, Message: c.Message,
			StartedAt: metav1.NewTime(c.StartedAt), FinishedAt: metav1.NewTime(c.FinishedAt),
			ContainerID: "containerd://" + c.ID}
	}

	f("never created: the default wait", nil, nil, "ContainerCreating",
		with(func(s *v1.ContainerStatus) { s.State.Waiting = &v1.ContainerStateWaiting{Reason: "ContainerCreating"} }))
	f("never created, init phase: PodInitializing", rtPod(sb), nil, "PodInitializing",
		with(func(s *v1.ContainerStatus) { s.State.Waiting = &v1.ContainerStateWaiting{Reason: "PodInitializing"} }))
	f("never created, the pipeline says why", rtPod(sb),
		map[string]Waiting{"app": {Reason: "ErrImagePull", Message: "not found"}}, "ContainerCreating",
		with(func(s *v1.ContainerStatus) {
			s.State.Waiting = &v1.ContainerStateWaiting{Reason: "ErrImagePull", Message: "not found"}
		}))
	f("running", rtPod(sb, run), nil, "ContainerCreating", with(func(s *v1.ContainerStatus) {
		s.ContainerID, s.ImageID, s.RestartCount = "containerd://c3", "sha256:app", 3
		s.State.Running = &v1.ContainerStateRunning{StartedAt: metav1.NewTime(run.StartedAt)}
		s.Ready, s.Started = true, &yes
	}))
	prevExit := rtExited("c2", "sb1", "app", 2, 137, exitedAt.Add(-time.Hour))
	prevExit.Reason = "OOMKilled"
	f("running after a restart: the previous exit is the last state", rtPod(sb, run, prevExit), nil, "",
		with(func(s *v1.ContainerStatus) {
			s.ContainerID, s.ImageID, s.RestartCount = "containerd://c3", "sha256:app", 3
			s.State.Running = &v1.ContainerStateRunning{StartedAt: metav1.NewTime(run.StartedAt)}
			s.Ready, s.Started = true, &yes
			s.LastTerminationState.Terminated = terminated(prevExit, "OOMKilled")
		}))
	f("exited, not restarting: terminated, reason Error", rtPod(sb, failed), nil, "", with(func(s *v1.ContainerStatus) {
		s.ContainerID, s.ImageID, s.RestartCount = "containerd://c3", "sha256:app", 3
		s.State.Terminated = terminated(failed, "Error")
		s.Started = &no
	}))
	ok := rtExited("c3", "sb1", "app", 3, 0, exitedAt)
	f("exited 0: reason Completed", rtPod(sb, ok), nil, "", with(func(s *v1.ContainerStatus) {
		s.ContainerID, s.ImageID, s.RestartCount = "containerd://c3", "sha256:app", 3
		s.State.Terminated = terminated(ok, "Completed")
		s.Started = &no
	}))
	f("exited and waiting to restart: the exit is the last state", rtPod(sb, failed, prevExit),
		map[string]Waiting{"app": {Reason: "CrashLoopBackOff", Message: "back-off 40s restarting failed container=app pod=web_default(uid-web)"}}, "",
		with(func(s *v1.ContainerStatus) {
			s.ContainerID, s.ImageID, s.RestartCount = "containerd://c3", "sha256:app", 3
			s.State.Waiting = &v1.ContainerStateWaiting{Reason: "CrashLoopBackOff", Message: "back-off 40s restarting failed container=app pod=web_default(uid-web)"}
			s.LastTerminationState.Terminated = terminated(failed, "Error")
		}))
	created := rtCreated("c4", "sb1", "app", 4)
	f("created, not started yet: ContainerCreating, last state from the exit before", rtPod(sb, created, failed), nil, "PodInitializing",
		with(func(s *v1.ContainerStatus) {
			s.ContainerID, s.RestartCount = "containerd://c4", 4
			s.State.Waiting = &v1.ContainerStateWaiting{Reason: "ContainerCreating"}
			s.Started = &no
			s.LastTerminationState.Terminated = terminated(failed, "Error")
		}))
	oldSandbox := rtExited("c0", "sb0", "app", 0, 1, exitedAt)
	f("newest instance in an older sandbox still shows", rtPod(sbList(rtReady("sb1", 1), rtDead("sb0", 0)), oldSandbox), nil, "",
		with(func(s *v1.ContainerStatus) {
			s.ContainerID, s.ImageID = "containerd://c0", "sha256:app"
			s.State.Terminated = terminated(oldSandbox, "Error")
			s.Started = &no
		}))
}

func TestPodPhaseRules(t *testing.T) {
	running := v1.ContainerStatus{State: v1.ContainerState{Running: &v1.ContainerStateRunning{}}}
	waiting := v1.ContainerStatus{State: v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: "ContainerCreating"}}}
	exit := func(code int32) v1.ContainerStatus {
		return v1.ContainerStatus{State: v1.ContainerState{Terminated: &v1.ContainerStateTerminated{ExitCode: code}}}
	}
	restarting := func(code int32) v1.ContainerStatus {
		return v1.ContainerStatus{
			State:                v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}},
			LastTerminationState: v1.ContainerState{Terminated: &v1.ContainerStateTerminated{ExitCode: code}},
		}
	}
	f := func(policy v1.RestartPolicy, inits, apps []v1.ContainerStatus, initDone bool, want v1.PodPhase) {
		t.Helper()
		pod := unitPod(withRestartPolicy(policy))
		if got := podPhase(pod, inits, apps, initDone); got != want {
			t.Errorf("%s, init %d (done %v), apps %d: phase %s, want %s", policy, len(inits), initDone, len(apps), got, want)
		}
	}
	list := func(s ...v1.ContainerStatus) []v1.ContainerStatus { return s }
	const always, never, onFailure = v1.RestartPolicyAlways, v1.RestartPolicyNever, v1.RestartPolicyOnFailure

	f(always, nil, nil, true, v1.PodPending)
	f(always, nil, list(waiting, running), true, v1.PodPending)
	f(always, nil, list(running, exit(1)), true, v1.PodRunning)
	f(always, nil, list(exit(0), exit(0)), true, v1.PodRunning)
	f(always, nil, list(restarting(1)), true, v1.PodRunning)
	f(never, nil, list(exit(0), exit(0)), true, v1.PodSucceeded)
	f(never, nil, list(exit(0), exit(1)), true, v1.PodFailed)
	f(onFailure, nil, list(exit(0), exit(0)), true, v1.PodSucceeded)
	f(onFailure, nil, list(exit(0), restarting(1)), true, v1.PodRunning)
	f(onFailure, nil, list(exit(0), exit(1)), true, v1.PodRunning)
	f(never, list(exit(1)), list(waiting), false, v1.PodFailed)
	f(never, list(exit(0)), list(waiting), true, v1.PodPending)
	f(always, list(exit(1)), list(waiting), false, v1.PodPending)
	f(onFailure, list(restarting(1)), list(waiting), false, v1.PodPending)
	f(never, list(running), list(waiting), false, v1.PodPending)

	// Being deleted: stopped containers make the phase terminal whatever
	// the restart policy; a container still stopping keeps it Running.
	deleting := func(policy v1.RestartPolicy, apps []v1.ContainerStatus, want v1.PodPhase) {
		t.Helper()
		pod := unitPod(withRestartPolicy(policy))
		pod.DeletionTimestamp = &metav1.Time{}
		if got := podPhase(pod, nil, apps, true); got != want {
			t.Errorf("deleting %s, apps %d: phase %s, want %s", policy, len(apps), got, want)
		}
	}
	deleting(always, list(exit(143)), v1.PodFailed)
	deleting(always, list(exit(0), exit(0)), v1.PodSucceeded)
	deleting(onFailure, list(exit(0), exit(137)), v1.PodFailed)
	deleting(always, list(running, exit(143)), v1.PodRunning)
}
