package stages

import (
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/podline/podline/pleg"
)

// SandboxPlan is what the sandbox stage does for one pass.
type SandboxPlan struct {
	// Create a new sandbox with this attempt number.
	Create  bool
	Attempt uint32
	// Stop these sandboxes: stale duplicates, or all of them once the pod
	// has finished.
	Stop []string
	// Remove these sandboxes: stopped ones older than the current one.
	Remove []string
	// Finished is set when the pod has run to completion and never runs
	// again (its phase is Succeeded or Failed).
	Finished bool
	// DeadlineEnding is set while the pod's active deadline ends it
	// before its containers did: the deadline has passed and the pod
	// still has a ready sandbox, or never had one. A pod whose sandbox
	// was already stopped (ended before podline restarted) is Finished
	// without it.
	DeadlineEnding bool
	// Draining is set while containers still run in the sandbox of a pod
	// its deadline ended: they get their grace period from the containers
	// stage first, as stopping the sandbox would kill them at once, and
	// the sandbox is stopped in a pass after.
	Draining bool
}

// PlanSandbox decides the sandbox work for a pod that should run. started
// is when the pod started (PodStart), which its active deadline counts
// from.
func PlanSandbox(pod *v1.Pod, rt *pleg.Pod, started, now time.Time) SandboxPlan {
	var plan SandboxPlan
	plan.Finished = PodFinished(pod, rt)
	cur := rt.CurrentSandbox()
	if !plan.Finished && PastDeadline(pod, started, now) {
		plan.Finished = true
		plan.DeadlineEnding = cur == nil || cur.State == pleg.SandboxReady
	}
	if rt != nil {
		for _, sb := range rt.Sandboxes[min(1, len(rt.Sandboxes)):] {
			if sb.State == pleg.SandboxReady {
				plan.Stop = append(plan.Stop, sb.ID)
			} else if !hasContainers(rt, sb.ID) {
				plan.Remove = append(plan.Remove, sb.ID)
			}
		}
	}
	switch {
	case plan.Finished:
		switch {
		case cur == nil || cur.State != pleg.SandboxReady:
		case plan.DeadlineEnding && runsContainers(rt, cur.ID):
			plan.Draining = true
		default:
			plan.Stop = append(plan.Stop, cur.ID)
		}
	case cur == nil:
		plan.Create = true
	case cur.State != pleg.SandboxReady:
		// The sandbox died. A pod that never restarts and already ran
		// containers stays dead: its status reports what happened.
		if pod.Spec.RestartPolicy == v1.RestartPolicyNever && len(rt.Containers) > 0 {
			return plan
		}
		plan.Create = true
		plan.Attempt = cur.Attempt + 1
	}
	return plan
}

// runsContainers reports whether a container in the sandbox is running or
// about to.
func runsContainers(rt *pleg.Pod, sandboxID string) bool {
	for _, c := range rt.Containers {
		if c.SandboxID == sandboxID && (c.State == pleg.ContainerRunning || c.State == pleg.ContainerCreated) {
			return true
		}
	}
	return false
}

func hasContainers(rt *pleg.Pod, sandboxID string) bool {
	for _, c := range rt.Containers {
		if c.SandboxID == sandboxID {
			return true
		}
	}
	return false
}

// PodFinished reports whether the pod has run to completion: every app
// container exited in the current sandbox and none will restart (its
// sidecars do not count: they are stopped then), or an init container
// failed in a pod that never restarts.
func PodFinished(pod *v1.Pod, rt *pleg.Pod) bool {
	sb := rt.CurrentSandbox()
	if sb == nil {
		return false
	}
	if pod.Spec.RestartPolicy == v1.RestartPolicyNever && initFailed(pod, rt, sb.ID) {
		return true
	}
	return appsCompleted(pod, rt, sb.ID)
}

// appsCompleted reports whether every app container of a pod that does
// not always restart has exited in the sandbox and none will restart:
// under Never whatever the exit code, under OnFailure with 0.
func appsCompleted(pod *v1.Pod, rt *pleg.Pod, sandboxID string) bool {
	policy := pod.Spec.RestartPolicy
	if policy == v1.RestartPolicyAlways || len(pod.Spec.Containers) == 0 {
		return false
	}
	for i := range pod.Spec.Containers {
		c := rt.LatestIn(sandboxID, pod.Spec.Containers[i].Name)
		if c == nil || c.State != pleg.ContainerExited {
			return false
		}
		if policy == v1.RestartPolicyOnFailure && c.ExitCode != 0 {
			return false
		}
	}
	return true
}

// initFailed reports whether an ordinary init container's latest run in
// the sandbox failed. A sidecar's exit is no failure: it is restarted, or
// it was stopped because the pod ended.
func initFailed(pod *v1.Pod, rt *pleg.Pod, sandboxID string) bool {
	for i := range pod.Spec.InitContainers {
		spec := &pod.Spec.InitContainers[i]
		if isSidecar(spec) {
			continue
		}
		c := rt.LatestIn(sandboxID, spec.Name)
		if c != nil && c.State == pleg.ContainerExited && c.ExitCode != 0 {
			return true
		}
	}
	return false
}
