package prober

// Kind is one of a container's three probes.
type Kind uint8

const (
	Liveness Kind = iota
	Readiness
	Startup
	numKinds
)

// String is the kubelet's name of the kind: it starts event messages
// ("Liveness probe failed: ...") and is the probe_type label.
func (k Kind) String() string {
	switch k {
	case Liveness:
		return "Liveness"
	case Readiness:
		return "Readiness"
	case Startup:
		return "Startup"
	}
	return "Unknown"
}

// lower is the kind as the kill message words it ("failed liveness probe").
func (k Kind) lower() string {
	switch k {
	case Liveness:
		return "liveness"
	case Readiness:
		return "readiness"
	case Startup:
		return "startup"
	}
	return "unknown"
}

// result is a probe's standing for one container instance: what its runs
// added up to once a threshold was crossed, not the last run.
type result uint8

const (
	resultUnknown result = iota
	resultSuccess
	resultFailure
)

func (r result) String() string {
	switch r {
	case resultSuccess:
		return "success"
	case resultFailure:
		return "failure"
	}
	return "unknown"
}

// initialResult is a probe's result before its first threshold is crossed,
// as the kubelet starts them: a container is not ready until its readiness
// probe says so, is alive until its liveness probe says otherwise, and has
// not started until its startup probe succeeds.
func initialResult(k Kind) result {
	switch k {
	case Readiness:
		return resultFailure
	case Liveness:
		return resultSuccess
	}
	return resultUnknown
}
