package prober

import (
	"time"

	v1 "k8s.io/api/core/v1"
)

// The kubelet's defaults, for fields left zero (the API server defaults
// them, but static pods from files may not have been through it).
const (
	defaultPeriod           = 10 * time.Second
	defaultTimeout          = 1 * time.Second
	defaultSuccessThreshold = 1
	defaultFailureThreshold = 3
)

// spec is one probe's settings, read once when its pod is first synced:
// probes are immutable in a pod's spec, and a static pod whose file changes
// gets a new UID.
type spec struct {
	period           time.Duration
	timeout          time.Duration
	initialDelay     time.Duration
	successThreshold int
	failureThreshold int
	// grace is the probe's terminationGracePeriodSeconds, which overrides
	// the pod's when a liveness or startup failure kills the container.
	grace *int64
}

func newSpec(k Kind, p *v1.Probe) spec {
	s := spec{
		period:           seconds(p.PeriodSeconds, defaultPeriod),
		timeout:          seconds(p.TimeoutSeconds, defaultTimeout),
		initialDelay:     seconds(p.InitialDelaySeconds, 0),
		successThreshold: threshold(p.SuccessThreshold, defaultSuccessThreshold),
		failureThreshold: threshold(p.FailureThreshold, defaultFailureThreshold),
	}
	if k == Liveness || k == Startup {
		// One success is all a container needs to be alive or started;
		// the API server refuses anything else, and a static pod must not
		// be able to make a failing container wait for several.
		s.successThreshold = 1
		if p.TerminationGracePeriodSeconds != nil {
			g := *p.TerminationGracePeriodSeconds
			s.grace = &g
		}
	}
	return s
}

func seconds(v int32, def time.Duration) time.Duration {
	if v <= 0 {
		return def
	}
	return time.Duration(v) * time.Second
}

func threshold(v int32, def int) int {
	if v <= 0 {
		return def
	}
	return int(v)
}

// newHandler picks the probe's handler. An unusable probe (an unknown port
// name, no action) still gets one, which errors on every run as the
// kubelet's does, so the user sees why in the pod's events.
func newHandler(p *v1.Probe, c *v1.Container, ex Execer) handler {
	switch {
	case p.Exec != nil:
		return &execHandler{cmd: p.Exec.Command, execer: ex}
	case p.HTTPGet != nil:
		return newHTTPHandler(p.HTTPGet, c)
	case p.TCPSocket != nil:
		return newTCPHandler(p.TCPSocket, c)
	case p.GRPC != nil:
		return newGRPCHandler(p.GRPC)
	}
	return brokenHandler{classed(errNoAction, errNoActionCause)}
}
