package stages

import (
	"reflect"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/podline/podline/pleg"
)

func TestPlanSandboxPastDeadline(t *testing.T) {
	f := func(name string, pod *v1.Pod, rt *pleg.Pod, now time.Time, want SandboxPlan) {
		t.Helper()
		if got := PlanSandbox(pod, rt, baseTime, now); !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\n got %+v\nwant %+v", name, got, want)
		}
	}
	pod := unitPod(withDeadline(60))
	before, after := baseTime.Add(59*time.Second), baseTime.Add(60*time.Second)
	ready := sbList(rtReady("sb1", 1))
	running := rtPod(ready, rtRunning("c1", "sb1", "app", 0))
	f("before the deadline: nothing to do", pod, running, before, SandboxPlan{})
	f("before the deadline: a missing sandbox is made", pod, rtPod(nil), before, SandboxPlan{Create: true})
	f("past it with containers running: they stop first, then the sandbox", pod, running, after,
		SandboxPlan{Finished: true, DeadlineEnding: true, Draining: true})
	f("past it, containers stopped: the sandbox stops", pod, rtPod(ready, rtExited("c1", "sb1", "app", 0, 143, after)), after,
		SandboxPlan{Finished: true, DeadlineEnding: true, Stop: []string{"sb1"}})
	f("past it, sandbox stopped (before a restart of podline): nothing is made again", pod,
		rtPod(sbList(rtDead("sb1", 1)), rtExited("c1", "sb1", "app", 0, 143, after)), after,
		SandboxPlan{Finished: true})
	f("past it, never started", pod, rtPod(nil), after, SandboxPlan{Finished: true, DeadlineEnding: true})
	never := unitPod(withDeadline(60), withRestartPolicy(v1.RestartPolicyNever))
	f("past it, but finished on its own: stops as any finished pod", never,
		rtPod(ready, rtExited("c1", "sb1", "app", 0, 0, baseTime.Add(time.Second))), after,
		SandboxPlan{Finished: true, Stop: []string{"sb1"}})
}

func TestPodStatusPastDeadline(t *testing.T) {
	type summary struct {
		Phase           v1.PodPhase
		Reason, Message string
		Ready           v1.ConditionStatus
		ReadyReason     string
		Start           time.Time
	}
	started := baseTime.Add(time.Hour)
	f := func(name string, pod *v1.Pod, rt *pleg.Pod, sync *PodSync, prev *v1.PodStatus, want summary) {
		t.Helper()
		st := PodStatus(StatusInput{Pod: pod, Runtime: rt, Node: statusNode, RuntimeName: "containerd", Now: statusNow, Prev: prev, Sync: sync})
		got := summary{Phase: st.Phase, Reason: st.Reason, Message: st.Message}
		if st.StartTime != nil {
			got.Start = st.StartTime.Time
		}
		for _, c := range st.Conditions {
			if c.Type == v1.PodReady {
				got.Ready, got.ReadyReason = c.Status, c.Reason
			}
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\n got %+v\nwant %+v", name, got, want)
		}
	}
	// statusNow is started+1h0m0.3s.
	sb := sbList(rtReady("sb1", 1))
	running := rtPod(sb, rtRunning("c1", "sb1", "app", 0))
	sync := &PodSync{FirstSeen: started, Started: started}
	exceeded := summary{v1.PodFailed, ReasonDeadlineExceeded, MessageDeadlineExceeded, v1.ConditionFalse, "PodCompleted", started}

	f("no deadline", unitPod(), running, sync, nil, summary{Phase: v1.PodRunning, Ready: v1.ConditionTrue, Start: started})
	f("not yet", unitPod(withDeadline(3601)), running, sync, nil, summary{Phase: v1.PodRunning, Ready: v1.ConditionTrue, Start: started})
	f("just passed, containers still stopping", unitPod(withDeadline(3600)), running, sync, nil, exceeded)
	f("passed while the image was still pulling", unitPod(withDeadline(60)), rtPod(sb),
		&PodSync{FirstSeen: started, Started: started, Waiting: map[string]Waiting{"app": {Reason: "ImagePullBackOff"}}}, nil, exceeded)
	f("its containers stopped", unitPod(withDeadline(60)),
		rtPod(sbList(rtDead("sb1", 1)), rtExited("c1", "sb1", "app", 0, 143, started.Add(61*time.Second))), sync, nil, exceeded)
	f("stays so", unitPod(withDeadline(60)), running, sync,
		&v1.PodStatus{Phase: v1.PodFailed, Reason: ReasonDeadlineExceeded, Message: MessageDeadlineExceeded, StartTime: &metav1.Time{Time: started}}, exceeded)

	// A deadline counts from the start the status reports.
	f("the published start counts", unitPod(withDeadline(60)), running, &PodSync{FirstSeen: statusNow, Started: statusNow}, &v1.PodStatus{
		Phase: v1.PodRunning, StartTime: &metav1.Time{Time: started}}, exceeded)

	// After a restart of podline nothing is remembered but the runtime:
	// the start is the sandbox's, and a pod of restartPolicy Always whose
	// container the deadline stopped is not brought back to Running.
	adopted := &PodSync{FirstSeen: statusNow}
	sandboxAt := rtDead("sb1", 1).CreatedAt
	restartedAt := summary{v1.PodFailed, ReasonDeadlineExceeded, MessageDeadlineExceeded, v1.ConditionFalse, "PodCompleted", sandboxAt}
	f("after a restart, Always", unitPod(withDeadline(60)),
		rtPod(sbList(rtDead("sb1", 1)), rtExited("c1", "sb1", "app", 0, 137, sandboxAt.Add(62*time.Second))), adopted, nil, restartedAt)
	f("after a restart, Never, the stop exited 0", unitPod(withDeadline(60), withRestartPolicy(v1.RestartPolicyNever)),
		rtPod(sbList(rtDead("sb1", 1)), rtExited("c1", "sb1", "app", 0, 0, sandboxAt.Add(60*time.Second))), adopted, nil, restartedAt)
	f("after a restart, finished on its own before the deadline", unitPod(withDeadline(60), withRestartPolicy(v1.RestartPolicyNever)),
		rtPod(sbList(rtDead("sb1", 1)), rtExited("c1", "sb1", "app", 0, 0, sandboxAt.Add(5*time.Second))), adopted, nil,
		summary{v1.PodSucceeded, "", "", v1.ConditionFalse, "PodCompleted", sandboxAt})
	f("succeeded before the deadline, then it passed", unitPod(withDeadline(60), withRestartPolicy(v1.RestartPolicyNever)),
		rtPod(sb, rtExited("c1", "sb1", "app", 0, 0, started.Add(59*time.Second+800*time.Millisecond))), sync,
		&v1.PodStatus{Phase: v1.PodSucceeded, StartTime: &metav1.Time{Time: started}},
		summary{v1.PodSucceeded, "", "", v1.ConditionFalse, "PodCompleted", started})
}
