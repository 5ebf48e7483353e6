package stages

import (
	"slices"

	v1 "k8s.io/api/core/v1"

	"github.com/podline/podline/pleg"
)

// planUnhealthy stops the running app containers and sidecars whose
// liveness or startup probe failed, with the probe's grace period when it
// has one. What follows is the ordinary course of an exit: the restart
// policy, after the crash back-off, decides whether it runs again, and
// its restart count and lastState show the kill.
func planUnhealthy(pod *v1.Pod, rt *pleg.Pod, sandboxID string, probes ProbeState, plan *ContainerPlan) {
	if probes == nil {
		return
	}
	for _, c := range rt.Containers {
		if c.SandboxID != sandboxID || c.State != pleg.ContainerRunning || !probedContainer(pod, c.Name) {
			continue
		}
		k := probes.Unhealthy(c.Name)
		if k == nil || slices.ContainsFunc(plan.Kill, func(a KillAction) bool { return a.ID == c.ID }) {
			continue
		}
		plan.Kill = append(plan.Kill, KillAction{ID: c.ID, Name: c.Name, SandboxID: c.SandboxID,
			Reason: k.Message, Event: k.Message, Grace: k.Grace})
	}
}

// probedContainer reports whether name is a container that may have
// probes: an app container or a sidecar.
func probedContainer(pod *v1.Pod, name string) bool {
	for i := range pod.Spec.Containers {
		if pod.Spec.Containers[i].Name == name {
			return true
		}
	}
	return sidecarNamed(pod, name)
}
