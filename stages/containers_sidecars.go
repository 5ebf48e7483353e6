package stages

import (
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/podline/podline/pleg"
	"github.com/podline/podline/podspec"
)

// Sidecars are init containers with restartPolicy Always. One starts in
// its place in the init order, but the next init container waits only
// for it to have started, not exited; then it runs beside the app
// containers, restarted whenever it exits (after the crash back-off),
// whatever its exit code and the pod's restart policy, until the pod
// ends. A pod that runs to completion (Never, OnFailure) ends when its app
// containers have: its sidecars are then stopped, not restarted, and do
// not count toward its phase.

// isSidecar reports whether an init container is a sidecar.
func isSidecar(c *v1.Container) bool {
	return c.RestartPolicy != nil && *c.RestartPolicy == v1.ContainerRestartPolicyAlways
}

// sidecarNamed reports whether the pod has a sidecar of this name.
func sidecarNamed(pod *v1.Pod, name string) bool {
	for i := range pod.Spec.InitContainers {
		if c := &pod.Spec.InitContainers[i]; c.Name == name {
			return isSidecar(c)
		}
	}
	return false
}

// sidecarStarted reports whether the sidecar instance c counts as started,
// which lets the next init container start: running, its postStart hook
// returned and its startup probe (if it has one) passed. probes says both
// of the last (see withPostStart).
func sidecarStarted(c *pleg.Container, probes ProbeState) bool {
	return c != nil && c.State == pleg.ContainerRunning && probeStarted(probes, c.Name)
}

// keepSidecar keeps one sidecar running in the sandbox: start it if it
// has no instance there, restart it after the crash back-off when it
// exited (a sidecar never completes), and replace an instance that was
// created but never started or runs an outdated spec.
func keepSidecar(pod *v1.Pod, spec *v1.Container, c *pleg.Container, rt *pleg.Pod, crash *Backoff, now time.Time, plan *ContainerPlan) {
	switch {
	case c == nil:
		plan.Start = append(plan.Start, StartAction{Spec: spec, Init: true, Attempt: nextAttempt(rt, spec.Name)})
	case c.State == pleg.ContainerExited:
		restartAfterBackoff(pod, spec, c, rt, true, crash, now, plan)
	case c.State == pleg.ContainerCreated:
		replaceCreated(spec, c, true, plan)
	case c.State == pleg.ContainerRunning && podspec.SpecChanged(c.Hash, spec):
		plan.Kill = append(plan.Kill, KillAction{ID: c.ID, Name: c.Name, SandboxID: c.SandboxID, Reason: "spec changed"})
	}
	// Running, or unknown: the runtime tells what it is next.
}

// keepSidecars keeps every sidecar running beside the app containers.
func keepSidecars(pod *v1.Pod, rt *pleg.Pod, sandboxID string, crash *Backoff, now time.Time, plan *ContainerPlan) {
	for i := range pod.Spec.InitContainers {
		if spec := &pod.Spec.InitContainers[i]; isSidecar(spec) {
			keepSidecar(pod, spec, rt.LatestIn(sandboxID, spec.Name), rt, crash, now, plan)
		}
	}
}

// reasonPodCompleted is why the sidecars of a pod that ran to completion
// are stopped.
const reasonPodCompleted = "the pod's app containers completed"

// stopSidecars stops the sidecars still running in the sandbox of a pod
// that has ended, last in the spec first (the stage keeps that order, see
// killWaves).
func stopSidecars(pod *v1.Pod, rt *pleg.Pod, sandboxID, reason string, plan *ContainerPlan) {
	for i := len(pod.Spec.InitContainers) - 1; i >= 0; i-- {
		spec := &pod.Spec.InitContainers[i]
		if !isSidecar(spec) {
			continue
		}
		c := rt.LatestIn(sandboxID, spec.Name)
		if c != nil && (c.State == pleg.ContainerRunning || c.State == pleg.ContainerCreated || c.State == pleg.ContainerUnknown) {
			plan.Kill = append(plan.Kill, KillAction{ID: c.ID, Name: c.Name, SandboxID: c.SandboxID, Reason: reason})
		}
	}
}

// laterInitRan reports whether an init container after the i-th has an
// instance in the sandbox: initialization went past the i-th, so a sidecar
// there that exited since is restarted without holding anything back.
func laterInitRan(pod *v1.Pod, rt *pleg.Pod, sandboxID string, i int) bool {
	for j := i + 1; j < len(pod.Spec.InitContainers); j++ {
		if rt.LatestIn(sandboxID, pod.Spec.InitContainers[j].Name) != nil {
			return true
		}
	}
	return false
}
