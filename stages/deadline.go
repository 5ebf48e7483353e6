package stages

import (
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/podline/podline/pleg"
)

// The status and event of a pod its activeDeadlineSeconds ended, worded
// as the kubelet words them: controllers and people match on them.
const (
	ReasonDeadlineExceeded  = "DeadlineExceeded"
	MessageDeadlineExceeded = "Pod was active on the node longer than the specified deadline"
)

// restartStartSlack is how far a pod's start time may move later across a
// restart of podline: a static pod's start is then read back from its
// oldest sandbox, made a moment after the pod was first seen. An exit that
// close before the deadline may have been the deadline's kill.
const restartStartSlack = time.Second

// PodStart is when the pod started on this node: the start its status
// reports and its active deadline counts from. The pipeline fixes it at
// the pod's first pass, so a sandbox removed later does not move a
// deadline. It is the start the API object carries (published by an
// earlier run of podline), else the earlier of when a source first
// delivered the pod and when its oldest sandbox was made: after a restart
// of podline, a static pod started when its first sandbox did.
func PodStart(pod *v1.Pod, firstSeen time.Time, rt *pleg.Pod) time.Time {
	if pod != nil && pod.Status.StartTime != nil && !pod.Status.StartTime.IsZero() {
		return pod.Status.StartTime.Time
	}
	t := firstSeen
	if rt != nil && len(rt.Sandboxes) > 0 {
		if oldest := rt.Sandboxes[len(rt.Sandboxes)-1].CreatedAt; !oldest.IsZero() && oldest.Before(t) {
			t = oldest
		}
	}
	return t
}

// DeadlineLeft is how long the pod may still be active before its
// activeDeadlineSeconds, counted from started, runs out: zero or less once
// it has. ok is false for a pod without a deadline or not started yet.
// The deadline is read from the pod each time, so a lowered one (the only
// change the API server allows on a running pod) takes effect.
func DeadlineLeft(pod *v1.Pod, started, now time.Time) (left time.Duration, ok bool) {
	if pod == nil || pod.Spec.ActiveDeadlineSeconds == nil || started.IsZero() {
		return 0, false
	}
	allowed := time.Duration(*pod.Spec.ActiveDeadlineSeconds) * time.Second
	return started.Add(allowed).Sub(now), true
}

// PastDeadline reports whether the pod has been active for its whole
// activeDeadlineSeconds: nothing of it may run or start any more.
func PastDeadline(pod *v1.Pod, started, now time.Time) bool {
	left, ok := DeadlineLeft(pod, started, now)
	return ok && left <= 0
}

// deadlineEnded reports whether the pod's phase is Failed with
// DeadlineExceeded: its deadline has passed and it was still active then.
// phase is what its containers alone make of it. A pod whose containers
// had all finished before the deadline keeps their phase; the evidence is
// each exit's time, which the runtime keeps across a podline restart.
func deadlineEnded(pod *v1.Pod, rt *pleg.Pod, started, now time.Time, phase v1.PodPhase) bool {
	left, ok := DeadlineLeft(pod, started, now)
	if !ok || left > 0 {
		return false
	}
	if phase != v1.PodSucceeded && phase != v1.PodFailed {
		return true
	}
	return !finishedBefore(rt, now.Add(left).Add(-restartStartSlack))
}

// finishedBefore reports whether the pod has containers and every one of
// them is known to have exited before t.
func finishedBefore(rt *pleg.Pod, t time.Time) bool {
	if rt == nil || len(rt.Containers) == 0 {
		return false
	}
	for _, c := range rt.Containers {
		if c.State != pleg.ContainerExited || c.FinishedAt.IsZero() || !c.FinishedAt.Before(t) {
			return false
		}
	}
	return true
}
