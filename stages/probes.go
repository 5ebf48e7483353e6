package stages

import (
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podline/podline/pleg"
)

// ProbeState is what the probes found of one pod's running containers.
// The plan reads it to know when a sidecar has started (the next init
// container waits for that); the status reads it for each container's
// started and ready. It answers for the newest instance of the container
// named: a restarted container is neither started nor ready until its
// probes pass again, so the prober forgets an instance's results when the
// instance changes.
//
// A nil ProbeState means no probes run: a running container is started
// and ready.
type ProbeState interface {
	// Started reports whether the container's startup probe has passed;
	// true for a container without one (or one the prober does not know).
	Started(name string) bool
	// Ready reports whether the container's readiness probe has passed;
	// true for a container without one.
	Ready(name string) bool
	// Unhealthy reports that the container's liveness or startup probe
	// failed: it is to be stopped and restarted per the restart policy.
	// Nil while it is healthy.
	Unhealthy(name string) *ProbeKill
}

// ProbeKill is why a container is stopped for its probes.
type ProbeKill struct {
	// Message is the Killing event's: "Container app failed liveness
	// probe, will be restarted".
	Message string
	// Grace is the probe's terminationGracePeriodSeconds, which wins over
	// the pod's; nil for the pod's.
	Grace *int64
}

// Prober runs the pods' probes. The containers and status stages tell it
// on every pass which containers of the pod run, and read what the probes
// found; it announces a changed finding as an event for the pod (see
// package prober), never by running a pass itself.
type Prober interface {
	// Sync gives the pod's running containers and the address probes
	// without a host go to. Cheap when nothing changed.
	Sync(pod *v1.Pod, podIP string, running []RunningContainer)
	// State is what the pod's probes found; nil for a pod without probes.
	State(uid types.UID) ProbeState
	// Forget stops the pod's probes.
	Forget(uid types.UID)
}

// RunningContainer is a running container as the prober needs it.
type RunningContainer struct {
	Name, ID  string
	StartedAt time.Time
}

// syncProbes tells the prober what runs in the pod's current sandbox and
// returns what its probes found. The address is the sandbox's, the node's
// for a host-network pod.
func syncProbes(p Prober, pod *v1.Pod, rt *pleg.Pod, node *Node) ProbeState {
	if p == nil || pod == nil {
		return nil
	}
	sb := rt.CurrentSandbox()
	var running []RunningContainer
	ip := ""
	if sb != nil {
		if len(sb.IPs) > 0 {
			ip = sb.IPs[0]
		}
		for _, c := range rt.Containers {
			if c.SandboxID == sb.ID && c.State == pleg.ContainerRunning {
				running = append(running, RunningContainer{Name: c.Name, ID: c.ID, StartedAt: c.StartedAt})
			}
		}
	}
	if pod.Spec.HostNetwork && node != nil && len(node.IPs) > 0 {
		ip = node.IPs[0]
	}
	p.Sync(pod, ip, running)
	return p.State(pod.UID)
}

// probeStarted is Started, true without probes.
func probeStarted(p ProbeState, name string) bool { return p == nil || p.Started(name) }

// probeReady is Ready, true without probes.
func probeReady(p ProbeState, name string) bool { return p == nil || p.Ready(name) }

// probeUnhealthy is Unhealthy, nil without probes.
func probeUnhealthy(p ProbeState, name string) *ProbeKill {
	if p == nil {
		return nil
	}
	return p.Unhealthy(name)
}
