package prober

import (
	"reflect"
	"testing"
)

func TestDecide(t *testing.T) {
	grace := int64(7)
	has := func(r result) probeView { return probeView{has: true, result: r} }
	with := func(l, r, s probeView) [numKinds]probeView {
		var v [numKinds]probeView
		v[Liveness], v[Readiness], v[Startup] = l, r, s
		return v
	}
	none := probeView{}
	killLiveness := &KillReason{Kind: Liveness, Message: "Container app failed liveness probe, will be restarted"}
	killStartup := &KillReason{Kind: Startup, Message: "Container app failed startup probe, will be restarted"}

	tests := []struct {
		name    string
		running bool
		restart bool
		probes  [numKinds]probeView
		want    ContainerProbeStatus
	}{
		{"no probes, running: started and ready", true, true, with(none, none, none),
			ContainerProbeStatus{Started: true, Ready: true}},
		{"no probes, not running: nothing", false, true, with(none, none, none),
			ContainerProbeStatus{}},
		{"no readiness probe: ready once running and started", true, true, with(has(resultSuccess), none, none),
			ContainerProbeStatus{Started: true, Ready: true}},
		{"readiness before its first success: not ready", true, true, with(none, has(resultFailure), none),
			ContainerProbeStatus{Started: true}},
		{"readiness success: ready", true, true, with(none, has(resultSuccess), none),
			ContainerProbeStatus{Started: true, Ready: true}},
		{"readiness success, not running: not ready", false, true, with(none, has(resultSuccess), none),
			ContainerProbeStatus{}},
		{"startup unknown holds readiness back", true, true, with(has(resultSuccess), has(resultSuccess), has(resultUnknown)),
			ContainerProbeStatus{}},
		{"startup unknown, no readiness probe: not ready either", true, true, with(none, none, has(resultUnknown)),
			ContainerProbeStatus{}},
		{"startup success: started, readiness decides", true, true, with(has(resultSuccess), has(resultFailure), has(resultSuccess)),
			ContainerProbeStatus{Started: true}},
		{"startup success and readiness success: ready", true, true, with(has(resultSuccess), has(resultSuccess), has(resultSuccess)),
			ContainerProbeStatus{Started: true, Ready: true}},
		{"liveness failure: kill, readiness unaffected", true, true, with(has(resultFailure), has(resultSuccess), none),
			ContainerProbeStatus{Started: true, Ready: true, Kill: killLiveness}},
		{"liveness failure, not running: no kill", false, true, with(has(resultFailure), none, none),
			ContainerProbeStatus{}},
		{"startup failure: kill, not started", true, true, with(has(resultSuccess), has(resultFailure), has(resultFailure)),
			ContainerProbeStatus{Kill: killStartup}},
		{"liveness and startup failures: liveness named", true, true, with(has(resultFailure), none, has(resultFailure)),
			ContainerProbeStatus{Kill: killLiveness}},
		{"restart policy Never: no 'will be restarted'", true, false, with(has(resultFailure), none, none),
			ContainerProbeStatus{Started: true, Ready: true, Kill: &KillReason{Kind: Liveness, Message: "Container app failed liveness probe"}}},
		{"the probe's grace period is carried", true, true, with(probeView{has: true, result: resultFailure, grace: &grace}, none, none),
			ContainerProbeStatus{Started: true, Ready: true, Kill: &KillReason{Kind: Liveness, Message: killLiveness.Message, GracePeriod: &grace}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := decide(decideInput{name: "app", running: tc.running, restart: tc.restart, probes: tc.probes})
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %+v (kill %+v), want %+v (kill %+v)", got, got.Kill, tc.want, tc.want.Kill)
			}
		})
	}
}

// The grace period handed out is a copy: a caller changing it must not
// change the probe's.
func TestDecideGraceIsACopy(t *testing.T) {
	grace := int64(7)
	in := decideInput{name: "app", running: true, restart: true}
	in.probes[Liveness] = probeView{has: true, result: resultFailure, grace: &grace}
	got := decide(in)
	*got.Kill.GracePeriod = 99
	if grace != 7 {
		t.Fatalf("probe's grace period changed to %d", grace)
	}
}
