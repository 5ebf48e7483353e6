package stages

import (
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/podline/podline/pleg"
)

// containerStatus builds one container's API status from its newest
// instance, the one before it, and why it waits (if it does).
func containerStatus(spec *v1.Container, rt *pleg.Pod, waiting map[string]Waiting, defaultWait, runtimeName string) v1.ContainerStatus {
	st := v1.ContainerStatus{Name: spec.Name, Image: spec.Image}
	cur := rt.Latest(spec.Name)
	if cur == nil {
		st.State.Waiting = waitingState(waiting, spec.Name, defaultWait)
		return st
	}
	st.ContainerID = runtimeName + "://" + cur.ID
	st.ImageID = cur.ImageRef
	st.RestartCount = int32(cur.Attempt)
	started := false
	switch cur.State {
	case pleg.ContainerRunning:
		st.State.Running = &v1.ContainerStateRunning{StartedAt: metav1.NewTime(cur.StartedAt)}
		st.Ready = true
		started = true
	case pleg.ContainerExited:
		term := terminatedState(cur, runtimeName)
		if w, ok := waiting[spec.Name]; ok {
			// Waiting to restart: the exit becomes the last state.
			st.State.Waiting = &v1.ContainerStateWaiting{Reason: w.Reason, Message: w.Message}
			st.LastTerminationState.Terminated = term
			return st
		}
		st.State.Terminated = term
	default:
		st.State.Waiting = waitingState(waiting, spec.Name, "ContainerCreating")
	}
	st.Started = &started
	if prev := rt.Previous(cur); prev != nil && prev.State == pleg.ContainerExited {
		st.LastTerminationState.Terminated = terminatedState(prev, runtimeName)
	}
	return st
}

func waitingState(waiting map[string]Waiting, name, def string) *v1.ContainerStateWaiting {
	if w, ok := waiting[name]; ok {
		return &v1.ContainerStateWaiting{Reason: w.Reason, Message: w.Message}
	}
	return &v1.ContainerStateWaiting{Reason: def}
}

func terminatedState(c *pleg.Container, runtimeName string) *v1.ContainerStateTerminated {
	reason := c.Reason
	if reason == "" {
		reason = "Error"
		if c.ExitCode == 0 {
			reason = "Completed"
		}
	}
	return &v1.ContainerStateTerminated{
		ExitCode:    c.ExitCode,
		Reason:      reason,
		Message:     c.Message,
		StartedAt:   metav1.NewTime(c.StartedAt),
		FinishedAt:  metav1.NewTime(c.FinishedAt),
		ContainerID: runtimeName + "://" + c.ID,
	}
}

// podPhase applies the kubelet's phase rules to the container statuses.
func podPhase(pod *v1.Pod, initStatuses, statuses []v1.ContainerStatus, initDone bool) v1.PodPhase {
	policy := pod.Spec.RestartPolicy
	for _, s := range initStatuses {
		if t := s.State.Terminated; t != nil && t.ExitCode != 0 && policy == v1.RestartPolicyNever {
			return v1.PodFailed
		}
	}
	if !initDone {
		return v1.PodPending
	}
	var running, waiting, stopped, succeeded int
	for _, s := range statuses {
		switch {
		case s.State.Running != nil:
			running++
		case s.State.Terminated != nil:
			stopped++
			if s.State.Terminated.ExitCode == 0 {
				succeeded++
			}
		case s.LastTerminationState.Terminated != nil:
			// Waiting to restart after an exit.
			stopped++
			if s.LastTerminationState.Terminated.ExitCode == 0 {
				succeeded++
			}
		default:
			waiting++
		}
	}
	switch {
	case waiting > 0:
		return v1.PodPending
	case running > 0:
		return v1.PodRunning
	case stopped > 0:
		switch {
		// A pod being deleted whose containers all stopped will never run
		// again: it ends in a terminal phase, so controllers see it done
		// before its object goes.
		case pod.DeletionTimestamp != nil && succeeded == stopped:
			return v1.PodSucceeded
		case pod.DeletionTimestamp != nil:
			return v1.PodFailed
		case policy == v1.RestartPolicyAlways:
			return v1.PodRunning
		case succeeded == stopped:
			return v1.PodSucceeded
		case policy == v1.RestartPolicyNever:
			return v1.PodFailed
		}
		return v1.PodRunning
	}
	return v1.PodPending
}
