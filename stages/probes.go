package stages

import "k8s.io/apimachinery/pkg/types"

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
}

// ProbeSource gives a pod's probe state; nil, or a nil ProbeState, when
// no probes run.
type ProbeSource func(uid types.UID) ProbeState

func (s ProbeSource) of(uid types.UID) ProbeState {
	if s == nil {
		return nil
	}
	return s(uid)
}

// probeStarted is Started, true without probes.
func probeStarted(p ProbeState, name string) bool { return p == nil || p.Started(name) }

// probeReady is Ready, true without probes.
func probeReady(p ProbeState, name string) bool { return p == nil || p.Ready(name) }
