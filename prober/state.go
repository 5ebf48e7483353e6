package prober

// state is one probe's standing for the current container instance: the
// result and the run of equal verdicts that leads to the next threshold.
// It is reset for every new container: counts are per instance, so a
// restarted container earns readiness with its own successes, not with
// the ones its predecessor made.
type state struct {
	result result
	// last and run: the last counted verdict (Success or Failure; Unknown
	// before any) and how many times in a row it came.
	last result
	run  int
	// onHold: a liveness or startup failure was reported; the probe waits
	// for the container to be replaced (the kubelet's onHold: probing a
	// container being killed only races its stop).
	onHold bool
}

func newState(k Kind) state { return state{result: initialResult(k)} }

// record counts one run that succeeded (ok) or failed and reports whether
// the result changed. A result moves only when the run reaches the
// threshold of its verdict.
func (s *state) record(k Kind, sp *spec, ok bool) (changed bool) {
	v := resultFailure
	if ok {
		v = resultSuccess
	}
	if s.last == v {
		s.run++
	} else {
		s.last, s.run = v, 1
	}
	if (v == resultFailure && s.run < sp.failureThreshold) || (v == resultSuccess && s.run < sp.successThreshold) {
		return false
	}
	changed = s.result != v
	s.result = v
	if v == resultFailure && (k == Liveness || k == Startup) {
		s.onHold = true
		s.run = 0
	}
	return changed
}
