package stages

import (
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/podline/podline/pleg"
	"github.com/podline/podline/podspec"
)

// KillAction stops one running container.
type KillAction struct {
	ID, Name, SandboxID string
	Reason              string
	// Event is the Killing event's message; "" for "Stopping container
	// <name>".
	Event string
	// Grace, when set, is the container's grace period in seconds instead
	// of the pod's: a probe's terminationGracePeriodSeconds.
	Grace *int64
}

// StartAction creates and starts one container.
type StartAction = podspec.Instance

// ContainerPlan is what the containers stage does for one pass. Kills run
// first; starts only run when there is nothing to kill, so a container is
// never started beside the instance it replaces.
type ContainerPlan struct {
	Kill  []KillAction
	Start []StartAction
	// Remove are dead instances to delete: all but the newest one of each
	// container, which the status keeps as lastState.
	Remove []string
	// Waiting is why containers that are not running wait.
	Waiting map[string]Waiting
	// RetryAfter is when the earliest back-off expires.
	RetryAfter time.Duration
}

func (p *ContainerPlan) wait(name, reason, msg string) {
	if p.Waiting == nil {
		p.Waiting = make(map[string]Waiting)
	}
	p.Waiting[name] = Waiting{Reason: reason, Message: msg}
}

func (p *ContainerPlan) retryIn(d time.Duration) {
	if d > 0 && (p.RetryAfter == 0 || d < p.RetryAfter) {
		p.RetryAfter = d
	}
}

// shouldRestart applies the pod's restart policy to an exited container.
func shouldRestart(policy v1.RestartPolicy, exitCode int32) bool {
	switch policy {
	case v1.RestartPolicyNever:
		return false
	case v1.RestartPolicyOnFailure:
		return exitCode != 0
	}
	return true
}

// nextAttempt is the attempt number of the next instance of a container:
// one past the newest in any sandbox, so restart counts survive sandbox
// recreation and podline restarts.
func nextAttempt(rt *pleg.Pod, name string) uint32 {
	if c := rt.Latest(name); c != nil {
		return c.Attempt + 1
	}
	return 0
}

// PlanContainers decides the container work for a pod whose sandbox is
// ready. crash holds the pod's restart back-off (read only here); probes
// is what the probes found (nil: a running container is started and
// ready); started is when the pod started (PodStart), which its active
// deadline counts from.
func PlanContainers(pod *v1.Pod, rt *pleg.Pod, crash *Backoff, probes ProbeState, started, now time.Time) ContainerPlan {
	var plan ContainerPlan
	sb := rt.CurrentSandbox()
	if sb == nil || sb.State != pleg.SandboxReady {
		return plan
	}
	if PastDeadline(pod, started, now) {
		planDeadline(rt, &plan)
		planGC(rt, &plan)
		return plan
	}
	planStrays(pod, rt, sb.ID, &plan)
	planUnhealthy(pod, rt, sb.ID, probes, &plan)
	planGC(rt, &plan)
	switch {
	case appsCompleted(pod, rt, sb.ID):
		// The pod ran to completion: nothing restarts, not even its
		// sidecars, which stop.
		stopSidecars(pod, rt, sb.ID, reasonPodCompleted, &plan)
	case appStartedIn(pod, rt, sb.ID):
		// Once an app container exists in this sandbox the init phase is
		// over, even if garbage collection removed the init containers
		// since; the sidecars still run beside the app containers.
		keepSidecars(pod, rt, sb.ID, crash, now, &plan)
		planApps(pod, rt, sb.ID, crash, now, &plan)
	case planInit(pod, rt, sb.ID, crash, probes, now, &plan):
		planApps(pod, rt, sb.ID, crash, now, &plan)
	default:
		for i := range pod.Spec.Containers {
			plan.wait(pod.Spec.Containers[i].Name, "PodInitializing", "")
		}
	}
	if len(plan.Kill) > 0 {
		plan.Start = nil
	}
	return plan
}

// reasonDeadlineKill is why a pod past its active deadline has its
// containers stopped, in the errors of a failed stop.
const reasonDeadlineKill = "the pod's active deadline passed"

// planDeadline stops every container of a pod past its active deadline,
// whatever its restart policy says, and starts none: the pod has ended.
// Each gets the pod's grace period, as in a deletion.
func planDeadline(rt *pleg.Pod, plan *ContainerPlan) {
	for _, c := range rt.Containers {
		if c.State == pleg.ContainerRunning || c.State == pleg.ContainerCreated || c.State == pleg.ContainerUnknown {
			plan.Kill = append(plan.Kill, KillAction{ID: c.ID, Name: c.Name, SandboxID: c.SandboxID, Reason: reasonDeadlineKill})
		}
	}
}

// planStrays kills running containers that should not run: ones in stale
// sandboxes, ones no longer in the spec, and older duplicates of a name.
func planStrays(pod *v1.Pod, rt *pleg.Pod, sandboxID string, plan *ContainerPlan) {
	wanted := make(map[string]bool, len(pod.Spec.Containers)+len(pod.Spec.InitContainers))
	for i := range pod.Spec.InitContainers {
		wanted[pod.Spec.InitContainers[i].Name] = true
	}
	for i := range pod.Spec.Containers {
		wanted[pod.Spec.Containers[i].Name] = true
	}
	newest := make(map[string]bool)
	for _, c := range rt.Containers {
		if c.State != pleg.ContainerRunning && c.State != pleg.ContainerCreated {
			continue
		}
		switch {
		case c.SandboxID != sandboxID:
			plan.Kill = append(plan.Kill, KillAction{ID: c.ID, Name: c.Name, SandboxID: c.SandboxID, Reason: "its sandbox was replaced"})
		case !wanted[c.Name]:
			plan.Kill = append(plan.Kill, KillAction{ID: c.ID, Name: c.Name, SandboxID: c.SandboxID, Reason: "not in the pod spec"})
		case newest[c.Name]:
			plan.Kill = append(plan.Kill, KillAction{ID: c.ID, Name: c.Name, SandboxID: c.SandboxID, Reason: "a newer instance exists"})
		default:
			newest[c.Name] = true
		}
	}
}

// planGC removes dead instances beyond the newest dead one of each name:
// that one is the container's lastState, as the kubelet keeps it.
func planGC(rt *pleg.Pod, plan *ContainerPlan) {
	keptDead := make(map[string]bool)
	for _, c := range rt.Containers {
		if c.State != pleg.ContainerExited {
			continue
		}
		if keptDead[c.Name] {
			plan.Remove = append(plan.Remove, c.ID)
		}
		keptDead[c.Name] = true
	}
}

// planInit walks the init containers in order and plans the first one not
// done, and the sidecars before it. It reports whether initialization is
// complete: every ordinary init container exited 0 and every sidecar has
// started.
func planInit(pod *v1.Pod, rt *pleg.Pod, sandboxID string, crash *Backoff, probes ProbeState, now time.Time, plan *ContainerPlan) bool {
	for i := range pod.Spec.InitContainers {
		spec := &pod.Spec.InitContainers[i]
		c := rt.LatestIn(sandboxID, spec.Name)
		if isSidecar(spec) {
			keepSidecar(pod, spec, c, rt, crash, now, plan)
			// The next init container waits for this one to start; one
			// that already ran is past that wait, even if this one has
			// exited since.
			if !sidecarStarted(c, probes) && !laterInitRan(pod, rt, sandboxID, i) {
				return false
			}
			continue
		}
		switch {
		case c == nil:
			plan.Start = append(plan.Start, StartAction{Spec: spec, Init: true, Attempt: nextAttempt(rt, spec.Name)})
			return false
		case c.State == pleg.ContainerExited && c.ExitCode == 0:
			continue
		case c.State == pleg.ContainerExited:
			if pod.Spec.RestartPolicy == v1.RestartPolicyNever {
				// The pod has failed: the sidecars started before this
				// one stop.
				stopSidecars(pod, rt, sandboxID, reasonInitFailed, plan)
				return false
			}
			restartAfterBackoff(pod, spec, c, rt, true, crash, now, plan)
			return false
		case c.State == pleg.ContainerCreated:
			replaceCreated(spec, c, true, plan)
			return false
		case c.State == pleg.ContainerRunning && podspec.SpecChanged(c.Hash, spec):
			plan.Kill = append(plan.Kill, KillAction{ID: c.ID, Name: c.Name, SandboxID: c.SandboxID, Reason: "spec changed"})
			return false
		default: // running, or unknown: wait for it
			return false
		}
	}
	return true
}

// reasonInitFailed is why the sidecars of a pod whose init container
// failed for good are stopped.
const reasonInitFailed = "an init container failed and the pod never restarts"

// appStartedIn reports whether an app container exists in the sandbox:
// then the init phase is over.
func appStartedIn(pod *v1.Pod, rt *pleg.Pod, sandboxID string) bool {
	for i := range pod.Spec.Containers {
		if rt.LatestIn(sandboxID, pod.Spec.Containers[i].Name) != nil {
			return true
		}
	}
	return false
}

func planApps(pod *v1.Pod, rt *pleg.Pod, sandboxID string, crash *Backoff, now time.Time, plan *ContainerPlan) {
	for i := range pod.Spec.Containers {
		planApp(pod, &pod.Spec.Containers[i], rt, sandboxID, crash, now, plan)
	}
}

func planApp(pod *v1.Pod, spec *v1.Container, rt *pleg.Pod, sandboxID string, crash *Backoff, now time.Time, plan *ContainerPlan) {
	c := rt.LatestIn(sandboxID, spec.Name)
	switch {
	case c == nil:
		plan.Start = append(plan.Start, StartAction{Spec: spec, Attempt: nextAttempt(rt, spec.Name)})
		plan.wait(spec.Name, "ContainerCreating", "")
	case c.State == pleg.ContainerRunning:
		if podspec.SpecChanged(c.Hash, spec) {
			plan.Kill = append(plan.Kill, KillAction{ID: c.ID, Name: c.Name, SandboxID: c.SandboxID, Reason: "spec changed"})
		}
	case c.State == pleg.ContainerCreated:
		replaceCreated(spec, c, false, plan)
		plan.wait(spec.Name, "ContainerCreating", "")
	case c.State == pleg.ContainerExited:
		if shouldRestart(pod.Spec.RestartPolicy, c.ExitCode) {
			restartAfterBackoff(pod, spec, c, rt, false, crash, now, plan)
		}
	}
}

// ReasonCrashLoopBackOff is the waiting reason of a container whose restart
// is held back.
const ReasonCrashLoopBackOff = "CrashLoopBackOff"

// restartAfterBackoff restarts an exited container now, or records the
// CrashLoopBackOff wait and when to come back.
func restartAfterBackoff(pod *v1.Pod, spec *v1.Container, c *pleg.Container, rt *pleg.Pod, init bool, crash *Backoff, now time.Time, plan *ContainerPlan) {
	finished := c.FinishedAt
	if finished.IsZero() {
		finished = now
	}
	if rem := crash.Remaining(spec.Name, finished, now); rem > 0 {
		plan.wait(spec.Name, ReasonCrashLoopBackOff,
			fmt.Sprintf("back-off %s restarting failed container=%s pod=%s", crash.Delay(spec.Name), spec.Name, kubeletPodName(pod)))
		plan.retryIn(rem)
		return
	}
	plan.Start = append(plan.Start, StartAction{Spec: spec, Init: init, Attempt: nextAttempt(rt, spec.Name)})
}
