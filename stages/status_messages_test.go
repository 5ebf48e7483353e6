package stages

import (
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/podline/podline/pleg"
)

func TestTerminationMessagesReadOncePerInstance(t *testing.T) {
	fx := newMessageFixture(t, v1.TerminationMessageReadFile, 3)
	var msgs terminationMessages
	running := rtRunning("c3", "sb1", "app", 3)
	exited := fx.c // attempt 2, "c1"
	rt := rtPod(sbList(rtReady("sb1", 0)), running, exited)

	fx.writeTermLog(t, "first words")
	if got := msgs.of(fx.node, fx.pod, rt); got["c1"] != "first words" || len(got) != 1 {
		t.Fatalf("messages %v", got)
	}
	// The file changes (it cannot, once the container is gone; a second
	// read would show it): the message read first stays.
	fx.writeTermLog(t, "rewritten")
	if got := msgs.of(fx.node, fx.pod, rt); got["c1"] != "first words" {
		t.Errorf("read again: %v", got)
	}

	// An exit seen only in a list (no exit code, no time) is not read
	// until its inspection.
	listed := rtExited("c3", "sb1", "app", 3, 1, time.Time{})
	listed.Detailed = false
	fx2 := *fx
	fx2.c = listed
	fx2.writeTermLog(t, "later")
	rt = rtPod(sbList(rtReady("sb1", 0)), listed, exited)
	if got := msgs.of(fx.node, fx.pod, rt); len(got) != 1 {
		t.Errorf("an exit seen in a list was read: %v", got)
	}
	listed.Detailed, listed.FinishedAt = true, baseTime
	if got := msgs.of(fx.node, fx.pod, rt); got["c3"] != "later" || got["c1"] != "first words" {
		t.Errorf("after its inspection: %v", got)
	}

	// Instances the status no longer shows are forgotten once the runtime
	// removed them.
	rt = rtPod(sbList(rtReady("sb1", 0)), rtRunning("c4", "sb1", "app", 4), listed)
	if got := msgs.of(fx.node, fx.pod, rt); len(got) != 1 || got["c3"] != "later" {
		t.Errorf("after c1 was removed: %v", got)
	}
	rt = rtPod(sbList(rtReady("sb1", 0)), rtRunning("c4", "sb1", "app", 4))
	if got := msgs.of(fx.node, fx.pod, rt); len(got) != 0 {
		t.Errorf("after c3 was removed: %v", got)
	}
	if _, ok := msgs.pods.Load(fx.pod.UID); ok {
		t.Error("a pod without messages keeps an entry")
	}
	msgs.of(fx.node, fx.pod, rtPod(nil, listed))
	msgs.forget(fx.pod.UID)
	if _, ok := msgs.pods.Load(fx.pod.UID); ok {
		t.Error("forget kept the pod")
	}
}

func TestPodStatusTerminationMessages(t *testing.T) {
	sb := sbList(rtReady("sb1", 1))
	cur := rtExited("c2", "sb1", "app", 1, 3, baseTime.Add(2*time.Minute))
	prev := rtExited("c1", "sb1", "app", 0, 137, baseTime.Add(time.Minute))
	prev.Reason, prev.Message = "OOMKilled", "memory limit"
	st := PodStatus(StatusInput{
		Pod: unitPod(withRestartPolicy(v1.RestartPolicyNever)), Runtime: rtPod(sb, cur, prev), Node: statusNode,
		RuntimeName: "containerd", Now: statusNow, Sync: &PodSync{FirstSeen: baseTime},
		Messages: map[string]string{"c2": "bye", "c1": "out of memory"},
	})
	cs := st.ContainerStatuses[0]
	if got := cs.State.Terminated.Message; got != "bye" {
		t.Errorf("state message %q", got)
	}
	if got := cs.LastTerminationState.Terminated.Message; got != "memory limit: out of memory" {
		t.Errorf("lastState message %q: the runtime's first, then the container's", got)
	}
}

func TestPodStatusShareOfMessages(t *testing.T) {
	sb := sbList(rtReady("sb1", 1))
	names := []string{"a", "b", "c", "d"}
	pod := unitPod(withRestartPolicy(v1.RestartPolicyOnFailure), withApps(names...))
	var cs []*pleg.Container
	msgs := map[string]string{}
	for _, n := range names {
		cur := rtExited(n+"2", "sb1", n, 1, 1, baseTime.Add(2*time.Minute))
		prev := rtExited(n+"1", "sb1", n, 0, 1, baseTime.Add(time.Minute))
		cs = append(cs, cur, prev)
		msgs[cur.ID] = strings.Repeat("x", 4096)
		msgs[prev.ID] = "short"
	}
	st := PodStatus(StatusInput{
		Pod: pod, Runtime: rtPod(sb, cs...), Node: statusNode, RuntimeName: "containerd", Now: statusNow,
		Sync:     &PodSync{FirstSeen: baseTime, Waiting: map[string]Waiting{"a": {Reason: ReasonCrashLoopBackOff}}},
		Messages: msgs,
	})
	for _, s := range st.ContainerStatuses {
		term := s.State.Terminated
		if s.Name == "a" {
			term = s.LastTerminationState.Terminated
		}
		if len(term.Message) != 3072 {
			t.Errorf("%s: a 4096-byte message became %d bytes, want 12 KiB / 4 containers", s.Name, len(term.Message))
		}
	}
}

// The kernel reports an exit before the runtime does: the file is whole
// then and read at once; the log may still lag, so a message that comes
// from the log waits for the runtime.
func TestTerminationMessagesOfAKernelReportedExit(t *testing.T) {
	fx := newMessageFixture(t, v1.TerminationMessageFallbackToLogsOnError, 3)
	fx.c.Detailed = false // exit code and time from the kernel
	rt := rtPod(sbList(rtReady("sb1", 0)), fx.c)
	var msgs terminationMessages
	fx.writeTermLog(t, "from the file")
	if got := msgs.of(fx.node, fx.pod, rt); got["c1"] != "from the file" {
		t.Errorf("file: %v", got)
	}

	fx = newMessageFixture(t, v1.TerminationMessageFallbackToLogsOnError, 3)
	fx.c.Detailed = false
	rt = rtPod(sbList(rtReady("sb1", 0)), fx.c)
	fx.writeTermLog(t, "")
	fx.writeLog(t, criLogLine("part of"))
	msgs = terminationMessages{}
	if got := msgs.of(fx.node, fx.pod, rt); len(got) != 0 {
		t.Errorf("the log was read before the runtime saw the exit: %v", got)
	}
	fx.writeLog(t, criLogLine("part of")+criLogLine("the output"))
	fx.c.Detailed = true
	if got := msgs.of(fx.node, fx.pod, rt); got["c1"] != "part of\nthe output\n" {
		t.Errorf("after the inspection: %v", got)
	}
}
