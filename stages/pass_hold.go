package stages

import (
	"time"

	v1 "k8s.io/api/core/v1"
)

// passHold is a pod's step back-off after a failed pass: no pass of the
// same kind starts before until, whoever asks for it. Runtime events,
// source updates (in cluster mode the pod's own status writes come back as
// updates), static-turn and hook wake-ups all ask for passes, so without
// it a failing pod that keeps receiving events retries at once, its
// pending pass starting the moment the failed one ends.
//
// The hold is the failure's retry delay, which untilDeadline may have
// shortened: the pass that enforces an active deadline is never held back.
type passHold struct {
	// until is when the retry falls due; zero means no hold.
	until time.Time
	// teardown is the kind of the pass that failed.
	teardown bool
}

// wait returns how long a pass asked for at now must still wait; zero
// means start it. A pass of the other kind goes at once: the back-off is
// for retrying what failed, and a pod to be stopped must not wait behind
// its failed start (nor a re-added pod behind its failed teardown).
func (h passHold) wait(teardown bool, now time.Time) time.Duration {
	if h.until.IsZero() || teardown != h.teardown {
		return 0
	}
	return max(h.until.Sub(now), 0)
}

// holdAfter is the hold a pass leaves behind when it ends at now: a failed
// pass holds the next one of its kind for retry, the delay its back-off
// asked for; a pass that succeeded or was superseded holds nothing.
func holdAfter(failed, teardown bool, retry time.Duration, now time.Time) passHold {
	if !failed || retry <= 0 {
		return passHold{}
	}
	return passHold{until: now.Add(retry), teardown: teardown}
}

// holdOnUpdate is the hold left after a source delivers next in place of
// prev. A new generation is a new spec (an image fixed, a deadline
// lowered): like the kubelet, podline syncs it at once instead of making
// it wait out the back-off earned by the spec before. Updates that change
// nothing of the spec (in cluster mode, the pod's own status writes coming
// back) keep the hold.
func holdOnUpdate(h passHold, prev, next *v1.Pod) passHold {
	if prev != nil && next != nil && prev.Generation != next.Generation {
		return passHold{}
	}
	return h
}
