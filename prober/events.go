package prober

import v1 "k8s.io/api/core/v1"

// Recorder receives the events probe runs report, with the kubelet's
// reasons and messages. It has the signature of the stages' recorder, so
// the one events.Recorder serves both. It is called from the workers for
// every failed run (not only when a result changes, as the kubelet does:
// client-go's recorder folds repeats into a count) and must not block.
type Recorder interface {
	PodEvent(pod *v1.Pod, container, eventType, reason, message string)
}

// The kubelet's event reasons for probes.
const (
	ReasonUnhealthy    = "Unhealthy"
	ReasonProbeWarning = "ProbeWarning"
)

// runEvent is the event one run reports, if any: every failure and error
// (Unhealthy) and every warning (ProbeWarning), all of type Warning.
func runEvent(k Kind, out outcome) (reason, message string, ok bool) {
	switch out.verdict {
	case failed:
		return ReasonUnhealthy, k.String() + " probe failed: " + out.output, true
	case warned:
		return ReasonProbeWarning, k.String() + " probe warning: " + out.output, true
	case errored:
		return ReasonUnhealthy, k.String() + " probe errored and resulted in unknown state: " + out.err.Error(), true
	}
	return "", "", false
}
