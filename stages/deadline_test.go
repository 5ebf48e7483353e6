package stages

import (
	"context"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/podline/podline/internal/monotime"
	"github.com/podline/podline/pleg"
)

func withDeadline(seconds int64) func(*v1.Pod) {
	return func(p *v1.Pod) { p.Spec.ActiveDeadlineSeconds = &seconds }
}

func TestDeadlineLeft(t *testing.T) {
	f := func(name string, pod *v1.Pod, started, now time.Time, wantLeft time.Duration, wantOK, wantPast bool) {
		t.Helper()
		left, ok := DeadlineLeft(pod, started, now)
		if left != wantLeft || ok != wantOK {
			t.Errorf("%s: DeadlineLeft = %s, %v; want %s, %v", name, left, ok, wantLeft, wantOK)
		}
		if past := PastDeadline(pod, started, now); past != wantPast {
			t.Errorf("%s: PastDeadline = %v, want %v", name, past, wantPast)
		}
	}
	start := baseTime
	f("no deadline", unitPod(), start, start.Add(time.Hour), 0, false, false)
	f("no pod (an orphan)", nil, start, start.Add(time.Hour), 0, false, false)
	f("not started yet", unitPod(withDeadline(30)), time.Time{}, start, 0, false, false)
	f("not yet", unitPod(withDeadline(30)), start, start.Add(10*time.Second), 20*time.Second, true, false)
	f("a moment before", unitPod(withDeadline(30)), start, start.Add(30*time.Second-time.Millisecond), time.Millisecond, true, false)
	f("just passed: the deadline itself counts as passed", unitPod(withDeadline(30)), start, start.Add(30*time.Second), 0, true, true)
	f("long passed", unitPod(withDeadline(30)), start, start.Add(time.Hour), 30*time.Second-time.Hour, true, true)

	// The API server lets a running pod's deadline be lowered; the next
	// reading of the pod counts with the new one.
	pod := unitPod(withDeadline(3600))
	now := start.Add(10 * time.Minute)
	f("before the change", pod, start, now, 50*time.Minute, true, false)
	lowered := pod.DeepCopy()
	lowered.Spec.ActiveDeadlineSeconds = ptrOf(int64(900))
	f("lowered, still ahead", lowered, start, now, 5*time.Minute, true, false)
	lowered.Spec.ActiveDeadlineSeconds = ptrOf(int64(60))
	f("lowered below the time already run", lowered, start, now, -9*time.Minute, true, true)
}

func TestPodStart(t *testing.T) {
	f := func(name string, pod *v1.Pod, firstSeen time.Time, rt *pleg.Pod, want time.Time) {
		t.Helper()
		if got := PodStart(pod, firstSeen, rt); !got.Equal(want) {
			t.Errorf("%s: PodStart = %s, want %s", name, got, want)
		}
	}
	seen := baseTime.Add(time.Hour)
	f("a new pod starts when first seen", unitPod(), seen, nil, seen)
	f("a sandbox made after it was seen changes nothing", unitPod(), baseTime, rtPod(sbList(rtReady("sb1", 1))), baseTime)
	// After a restart of podline the pod is seen anew; its oldest sandbox
	// remembers when it started.
	f("adopted: the oldest sandbox", unitPod(), seen,
		rtPod(sbList(rtReady("sb3", 3), rtDead("sb2", 2))), rtDead("sb2", 2).CreatedAt)
	withStatus := unitPod(func(p *v1.Pod) {
		p.Status.StartTime = &metav1.Time{Time: baseTime.Add(-time.Hour)}
	})
	f("an API pod carries the start an earlier run published", withStatus, seen,
		rtPod(sbList(rtReady("sb1", 1))), baseTime.Add(-time.Hour))
}

// A pod adopted after a restart of podline starts at the time its status
// carries, a wall-clock time. The first pass fixes it on the monotonic
// clock, so the deadline counts from there however the clock is set
// later; the status still reports the same time.
func TestStartedFixedOnTheMonotonicClock(t *testing.T) {
	f := func(name string, offset time.Duration) {
		t.Helper()
		now := time.Now()
		apiStart := now.Round(0).Add(offset) // as decoded from the API
		rec := newRecord("u1", now)
		rec.desired = unitPod(withDeadline(3600), func(p *v1.Pod) {
			p.Status.StartTime = &metav1.Time{Time: apiStart}
		})
		w := rec.startPassLocked(context.Background(), now, nil, nil)
		defer w.cancel()
		started := w.Sync.Started
		if !monotime.Has(started) {
			t.Fatalf("%s: the start was kept without a monotonic reading: %v", name, started)
		}
		if !started.Equal(apiStart) || started.UnixNano() != apiStart.UnixNano() {
			t.Errorf("%s: start %v, want the API's %v", name, started, apiStart)
		}
		later := now.Add(time.Minute)
		if left, _ := DeadlineLeft(w.Pod, started, later); left != time.Hour-time.Minute+offset {
			t.Errorf("%s: a minute later: %s left, want %s", name, left, time.Hour-time.Minute+offset)
		}
	}
	f("started ten minutes ago", -10*time.Minute)
	f("started just now", 0)
}

func TestDeadlineEnded(t *testing.T) {
	f := func(name string, pod *v1.Pod, rt *pleg.Pod, now time.Time, phase v1.PodPhase, want bool) {
		t.Helper()
		if got := deadlineEnded(pod, rt, baseTime, now, phase); got != want {
			t.Errorf("%s: deadlineEnded = %v, want %v", name, got, want)
		}
	}
	pod := unitPod(withDeadline(60), withRestartPolicy(v1.RestartPolicyNever))
	deadline := baseTime.Add(time.Minute)
	later := deadline.Add(time.Minute)
	sb := sbList(rtReady("sb1", 1))
	running := rtPod(sb, rtRunning("c1", "sb1", "app", 0))
	f("no deadline", unitPod(), running, later, v1.PodRunning, false)
	f("not yet", pod, running, deadline.Add(-time.Millisecond), v1.PodRunning, false)
	f("running at the deadline", pod, running, deadline, v1.PodRunning, true)
	f("pending at the deadline (image still pulling)", pod, rtPod(sb), later, v1.PodPending, true)
	f("killed by it: exited after it", pod, rtPod(sb, rtExited("c1", "sb1", "app", 0, 143, deadline.Add(20*time.Millisecond))), later, v1.PodFailed, true)
	f("finished on its own long before", pod, rtPod(sb, rtExited("c1", "sb1", "app", 0, 0, baseTime.Add(10*time.Second))), later, v1.PodSucceeded, false)
	f("failed on its own long before", pod, rtPod(sb, rtExited("c1", "sb1", "app", 0, 1, baseTime.Add(10*time.Second))), later, v1.PodFailed, false)
	// After a restart the start is read back from the sandbox, a moment
	// late: an exit that close to the deadline may have been its kill.
	f("exited just before it", pod, rtPod(sb, rtExited("c1", "sb1", "app", 0, 0, deadline.Add(-100*time.Millisecond))), later, v1.PodSucceeded, true)
	unknown := rtExited("c1", "sb1", "app", 0, 0, time.Time{})
	f("exit time unknown", pod, rtPod(sb, unknown), later, v1.PodSucceeded, true)
	f("one exited before, one still running", unitPod(withDeadline(60), withApps("a", "b")),
		rtPod(sb, rtExited("a1", "sb1", "a", 0, 0, baseTime.Add(time.Second)), rtRunning("b1", "sb1", "b", 0)), later, v1.PodRunning, true)
	// Always: exited containers do not end the pod, so the deadline does.
	f("restartPolicy Always waiting to restart", unitPod(withDeadline(60)),
		rtPod(sb, rtExited("c1", "sb1", "app", 0, 1, baseTime.Add(time.Second))), later, v1.PodRunning, true)
}
