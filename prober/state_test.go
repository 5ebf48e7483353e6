package prober

import (
	"testing"

	v1 "k8s.io/api/core/v1"
)

func TestStateThresholds(t *testing.T) {
	sp := newSpec(Readiness, &v1.Probe{SuccessThreshold: 2, FailureThreshold: 3})
	s := newState(Readiness)
	if s.result != resultFailure {
		t.Fatalf("readiness starts at %v, want failure", s.result)
	}
	steps := []struct {
		ok      bool
		want    result
		changed bool
	}{
		{true, resultFailure, false}, // 1 success of 2
		{true, resultSuccess, true},  // 2 of 2
		{true, resultSuccess, false}, // stays, no change reported
		{false, resultSuccess, false},
		{false, resultSuccess, false},
		{true, resultSuccess, false}, // a success breaks the run of failures
		{false, resultSuccess, false},
		{false, resultSuccess, false},
		{false, resultFailure, true}, // 3 in a row
		{false, resultFailure, false},
	}
	for i, st := range steps {
		changed := s.record(Readiness, &sp, st.ok)
		if s.result != st.want || changed != st.changed {
			t.Fatalf("step %d (ok=%v): result %v changed %v, want %v %v", i, st.ok, s.result, changed, st.want, st.changed)
		}
	}
	if s.onHold {
		t.Fatal("a readiness failure put the probe on hold")
	}
}

func TestStateLivenessFailureHolds(t *testing.T) {
	for _, k := range []Kind{Liveness, Startup} {
		sp := newSpec(k, &v1.Probe{FailureThreshold: 2, SuccessThreshold: 5})
		if sp.successThreshold != 1 {
			t.Fatalf("%v success threshold %d, want 1", k, sp.successThreshold)
		}
		s := newState(k)
		s.record(k, &sp, false)
		if s.onHold || s.result == resultFailure {
			t.Fatalf("%v: one failure of two reported", k)
		}
		if !s.record(k, &sp, false) || s.result != resultFailure || !s.onHold {
			t.Fatalf("%v: two failures: result %v onHold %v", k, s.result, s.onHold)
		}
	}
}

func TestSpecDefaults(t *testing.T) {
	sp := newSpec(Readiness, &v1.Probe{})
	if sp.period != defaultPeriod || sp.timeout != defaultTimeout || sp.initialDelay != 0 ||
		sp.successThreshold != 1 || sp.failureThreshold != 3 {
		t.Fatalf("defaults: %+v", sp)
	}
	g := int64(5)
	if newSpec(Readiness, &v1.Probe{TerminationGracePeriodSeconds: &g}).grace != nil {
		t.Fatal("a readiness probe carries a grace period; only liveness and startup kill")
	}
	if lg := newSpec(Liveness, &v1.Probe{TerminationGracePeriodSeconds: &g}).grace; lg == nil || *lg != 5 {
		t.Fatalf("liveness grace %v, want 5", lg)
	}
}
