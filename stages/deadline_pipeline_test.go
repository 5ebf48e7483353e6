package stages_test

import (
	"context"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podline/podline/cri"
	"github.com/podline/podline/cri/fake"
	"github.com/podline/podline/stages"
)

func withActiveDeadline(seconds int64) func(*v1.Pod) {
	return func(p *v1.Pod) { p.Spec.ActiveDeadlineSeconds = &seconds }
}

func deadlineExceeded(st v1.PodStatus) bool {
	return st.Phase == v1.PodFailed && st.Reason == stages.ReasonDeadlineExceeded
}

// waitExceeded waits for the pod to end DeadlineExceeded and returns its
// status and how long after the deadline that status was published.
func (h *harness) waitExceeded(uid types.UID, deadline time.Duration) (v1.PodStatus, time.Duration) {
	h.t.Helper()
	st := h.waitFor(uid, "Failed/DeadlineExceeded", deadlineExceeded)
	late := time.Since(st.StartTime.Add(deadline))
	if st.Message != stages.MessageDeadlineExceeded {
		h.t.Fatalf("message = %q", st.Message)
	}
	return st, late
}

// waitStopped waits until every container of the pod has terminated and
// its sandbox is stopped.
func (h *harness) waitStopped(uid types.UID) v1.PodStatus {
	h.t.Helper()
	st := h.waitFor(uid, "stopped", func(st v1.PodStatus) bool {
		for _, cs := range st.ContainerStatuses {
			if cs.State.Terminated == nil {
				return false
			}
		}
		return len(st.ContainerStatuses) > 0
	})
	deadline := time.Now().Add(5 * time.Second)
	for {
		sbs, err := h.rt.ListPodSandbox(context.Background(), &runtimeapi.PodSandboxFilter{
			LabelSelector: map[string]string{cri.LabelPodUID: string(uid)}})
		if err != nil {
			h.t.Fatal(err)
		}
		if len(sbs) == 1 && sbs[0].State == runtimeapi.PodSandboxState_SANDBOX_NOTREADY {
			return st
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("sandboxes of a pod past its deadline: %v", sbs)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestActiveDeadlineEndsPod(t *testing.T) {
	for _, policy := range []v1.RestartPolicy{v1.RestartPolicyAlways, v1.RestartPolicyOnFailure, v1.RestartPolicyNever} {
		t.Run(string(policy), func(t *testing.T) {
			log := &eventLog{}
			h := newHarness(t, harnessOpts{events: log})
			pod := testPod("deadline", withPolicy(policy), withActiveDeadline(1))
			h.pipe.Upsert(pod)
			h.waitRunning(pod.UID)
			st, late := h.waitExceeded(pod.UID, time.Second)
			t.Logf("Failed/DeadlineExceeded published %s after the deadline", late)
			if late > time.Second {
				t.Errorf("published %s after the deadline, want well within a second", late)
			}
			for _, c := range st.Conditions {
				if c.Type == v1.PodReady && (c.Status != v1.ConditionFalse || c.Reason != "PodCompleted") {
					t.Errorf("Ready = %s %s, want False PodCompleted", c.Status, c.Reason)
				}
			}
			st = h.waitStopped(pod.UID)
			if cs := st.ContainerStatuses[0]; cs.RestartCount != 0 || cs.State.Terminated.ExitCode == 0 {
				t.Errorf("container status = %+v, want terminated by the stop, never restarted", cs)
			}
			log.wait(t, "deadline Normal DeadlineExceeded : Pod was active on the node longer than the specified deadline")
			log.wait(t, "deadline Normal Killing app: Stopping container app")
			time.Sleep(300 * time.Millisecond) // room for a wrong restart
			if n := h.fake.Calls("CreateContainer"); n != 1 {
				t.Errorf("CreateContainer called %d times, want 1: nothing restarts past the deadline", n)
			}
			if n := h.fake.Calls("RunPodSandbox"); n != 1 {
				t.Errorf("RunPodSandbox called %d times, want 1", n)
			}
			if st, _, _ := h.store.Status(pod.UID); !deadlineExceeded(st) {
				t.Errorf("status moved on to %s %s", st.Phase, st.Reason)
			}
			if n, _ := h.admitter.Admitted(); n != 0 {
				t.Errorf("a pod past its deadline still holds admission: %d", n)
			}
		})
	}
}

// The container's grace period is the pod's; the status does not wait for
// it, as the pod is over from its deadline on.
func TestActiveDeadlinePublishedBeforeTheStop(t *testing.T) {
	h := newHarness(t, harnessOpts{fake: fake.Options{Latency: map[string]time.Duration{"StopContainer": 2 * time.Second}}})
	pod := testPod("slow-stop", withActiveDeadline(1))
	h.pipe.Upsert(pod)
	h.waitRunning(pod.UID)
	st, late := h.waitExceeded(pod.UID, time.Second)
	if late > time.Second {
		t.Errorf("published %s after the deadline, want it before the 2s stop ends", late)
	}
	if st.ContainerStatuses[0].State.Running == nil {
		t.Errorf("container = %+v, want still running while it stops", st.ContainerStatuses[0].State)
	}
	h.waitStopped(pod.UID)
}

// The deadline shares the one retry queue with the CrashLoopBackOff
// retry: the earliest wins, and a later pass arms the other again.
func TestActiveDeadlineBeforeCrashLoopRetry(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	pod := testPod("crash-deadline", withEnv("FAKE_EXIT_AFTER", "20ms"), withEnv("FAKE_EXIT_CODE", "3"), withActiveDeadline(2))
	h.pipe.Upsert(pod)
	h.waitFor(pod.UID, "in CrashLoopBackOff", func(st v1.PodStatus) bool {
		w := st.ContainerStatuses[0].State.Waiting
		return w != nil && w.Reason == "CrashLoopBackOff"
	})
	// The back-off holds the next restart for 10s; the deadline comes first.
	// The restart is due 10 s after the crash, 8 s past the deadline: the
	// deadline's own timer ended the pod if it ended well before that.
	_, late := h.waitExceeded(pod.UID, 2*time.Second)
	if late < 0 || late > 6*time.Second {
		t.Errorf("published %s after the deadline, want before the restart due 8 s after it", late)
	}
	h.waitStopped(pod.UID)
	if n := h.fake.Calls("CreateContainer"); n != 2 {
		t.Errorf("CreateContainer called %d times, want 2", n)
	}
}

// Retries that fall due before the deadline (a failing step backs off
// 0.5s, then 1s, then 2s) take the pod's one entry in the retry queue; each
// of their passes arms the deadline again, and it still wins over the
// retry after it.
func TestActiveDeadlineAcrossEarlierRetries(t *testing.T) {
	log := &eventLog{}
	h := newHarness(t, harnessOpts{events: log})
	h.fake.Inject("CreateContainer", codes.Unavailable, 100)
	pod := testPod("retrying", withActiveDeadline(2))
	h.pipe.Upsert(pod)
	_, late := h.waitExceeded(pod.UID, 2*time.Second)
	if late > time.Second {
		t.Errorf("published %s after the deadline, want within a second (the retry after it is at 3.5s)", late)
	}
	if n := h.fake.Calls("CreateContainer"); n < 2 || n > 4 {
		t.Errorf("CreateContainer called %d times before the deadline, want 3", n)
	}
	log.wait(t, "retrying Normal DeadlineExceeded")
	calls := h.fake.Calls("CreateContainer")
	time.Sleep(1500 * time.Millisecond) // past the retry the back-off planned
	if n := h.fake.Calls("CreateContainer"); n != calls {
		t.Errorf("CreateContainer called %d more times past the deadline", n-calls)
	}
}

// activeDeadlineSeconds may be lowered on a running API pod.
func TestActiveDeadlineLowered(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	pod := testPod("lowered", withActiveDeadline(3600))
	h.pipe.Upsert(pod)
	h.waitRunning(pod.UID)
	lowered := pod.DeepCopy()
	lowered.Spec.ActiveDeadlineSeconds = ptr(int64(2))
	h.pipe.Upsert(lowered)
	// Ending within waitExceeded's 10 s at all shows the lowered deadline
	// was armed (the first one is an hour away); ending before it would
	// be a pod failed early.
	if _, late := h.waitExceeded(pod.UID, 2*time.Second); late < 0 {
		t.Errorf("ended %s before the lowered deadline", -late)
	}
	h.waitStopped(pod.UID)
}

// A pod its deadline ended stays ended across a restart of podline: the
// runtime still holds its exited container and stopped sandbox, and
// nothing else.
func TestActiveDeadlineSurvivesRestart(t *testing.T) {
	sock, srv := fake.Listen(t, fake.Options{})
	h1 := newHarness(t, harnessOpts{socket: sock, srv: srv})
	pod := testPod("ended", withActiveDeadline(1))
	h1.pipe.Upsert(pod)
	h1.waitExceeded(pod.UID, time.Second)
	before := h1.waitStopped(pod.UID)
	h1.stop()

	h2 := newHarness(t, harnessOpts{socket: sock, srv: srv, node: h1.node})
	h2.pipe.Upsert(pod)
	h2.pipe.SourcesReady()
	after, _ := h2.waitExceeded(pod.UID, time.Second)
	time.Sleep(300 * time.Millisecond)
	if st, _, _ := h2.store.Status(pod.UID); !deadlineExceeded(st) {
		t.Fatalf("after a restart: %s %s", st.Phase, st.Reason)
	}
	if d := after.StartTime.Sub(before.StartTime.Time); d < 0 || d > time.Second {
		t.Errorf("start time moved by %s across the restart", d)
	}
	if n := srv.Calls("CreateContainer"); n != 1 {
		t.Errorf("CreateContainer called %d times across a restart, want 1", n)
	}
	if n := srv.Calls("RunPodSandbox"); n != 1 {
		t.Errorf("RunPodSandbox called %d times across a restart, want 1", n)
	}
}

func ptr[T any](v T) *T { return &v }
