package stages

import (
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/podline/podline/pleg"
	"github.com/podline/podline/podspec"
)

// containerStatus builds one container's API status from its newest
// instance, the one before it, what its probes found (nil: a running
// container is started and ready), why it waits (if it does) and the
// termination messages by container ID.
func containerStatus(spec *v1.Container, rt *pleg.Pod, probes ProbeState, waiting map[string]Waiting, defaultWait, runtimeName string, msgs map[string]string) v1.ContainerStatus {
	st := v1.ContainerStatus{Name: spec.Name, Image: spec.Image, VolumeMounts: mountStatuses(spec)}
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
		// Readiness probes only run once the startup probe passed.
		started = probeStarted(probes, spec.Name)
		st.Ready = started && probeReady(probes, spec.Name)
	case pleg.ContainerExited:
		term := terminatedState(cur, runtimeName, msgs[cur.ID])
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
		st.LastTerminationState.Terminated = terminatedState(prev, runtimeName, msgs[prev.ID])
	}
	return st
}

// mountStatuses lists the container's volume mounts, as the kubelet
// reports them whatever the container's state: a read-only one says
// whether it is recursively so, as podspec mounts it (a mode podspec
// refuses reads Disabled: the container is not created anyway).
func mountStatuses(spec *v1.Container) []v1.VolumeMountStatus {
	if len(spec.VolumeMounts) == 0 {
		return nil
	}
	out := make([]v1.VolumeMountStatus, len(spec.VolumeMounts))
	for i := range spec.VolumeMounts {
		vm := &spec.VolumeMounts[i]
		out[i] = v1.VolumeMountStatus{Name: vm.Name, MountPath: vm.MountPath, ReadOnly: vm.ReadOnly}
		if vm.ReadOnly {
			rro := v1.RecursiveReadOnlyDisabled
			if recursive, err := podspec.RecursiveReadOnly(vm); err == nil && recursive {
				rro = v1.RecursiveReadOnlyEnabled
			}
			out[i].RecursiveReadOnly = &rro
		}
	}
	return out
}

func waitingState(waiting map[string]Waiting, name, def string) *v1.ContainerStateWaiting {
	if w, ok := waiting[name]; ok {
		return &v1.ContainerStateWaiting{Reason: w.Reason, Message: w.Message}
	}
	return &v1.ContainerStateWaiting{Reason: def}
}

// terminatedState is an exited instance's state. Its message is the
// runtime's, then what the container left as its termination message.
func terminatedState(c *pleg.Container, runtimeName, termination string) *v1.ContainerStateTerminated {
	reason := c.Reason
	if reason == "" {
		reason = "Error"
		if c.ExitCode == 0 {
			reason = "Completed"
		}
	}
	msg := c.Message
	if termination != "" {
		if msg != "" {
			msg += ": "
		}
		msg += termination
	}
	return &v1.ContainerStateTerminated{
		ExitCode:    c.ExitCode,
		Reason:      reason,
		Message:     msg,
		StartedAt:   metav1.NewTime(c.StartedAt),
		FinishedAt:  metav1.NewTime(c.FinishedAt),
		ContainerID: runtimeName + "://" + c.ID,
	}
}

// podPhase applies the kubelet's phase rules to the container statuses.
// A running sidecar keeps the pod Running (while it is stopped after the
// app containers completed, too); otherwise sidecars do not count: how
// the app containers ended decides Succeeded or Failed, not the exit code
// a sidecar's stop gave it.
func podPhase(pod *v1.Pod, initStatuses, statuses []v1.ContainerStatus, initDone bool) v1.PodPhase {
	policy := pod.Spec.RestartPolicy
	var running, waiting, stopped, succeeded int
	for _, s := range initStatuses {
		if sidecarNamed(pod, s.Name) {
			if s.State.Running != nil {
				running++
			}
			continue
		}
		if t := s.State.Terminated; t != nil && t.ExitCode != 0 && policy == v1.RestartPolicyNever {
			return v1.PodFailed
		}
	}
	if !initDone {
		return v1.PodPending
	}
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

// limitMessages cuts each termination message in the statuses to the
// pod's per-container budget, keeping its start.
func limitMessages(st *v1.PodStatus, budget int) {
	cut := func(t *v1.ContainerStateTerminated) {
		if t != nil && len(t.Message) > budget {
			t.Message = t.Message[:budget]
		}
	}
	for _, list := range [][]v1.ContainerStatus{st.InitContainerStatuses, st.ContainerStatuses} {
		for i := range list {
			cut(list[i].State.Terminated)
			cut(list[i].LastTerminationState.Terminated)
		}
	}
}
