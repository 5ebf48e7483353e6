package stages

import (
	"testing"

	"github.com/podline/podline/pleg"
)

// unhealthyProbes is a ProbeState whose probes failed for the names it
// holds.
type unhealthyProbes map[string]*ProbeKill

func (unhealthyProbes) Started(string) bool                { return true }
func (unhealthyProbes) Ready(string) bool                  { return true }
func (p unhealthyProbes) Unhealthy(name string) *ProbeKill { return p[name] }

func TestPlanUnhealthy(t *testing.T) {
	grace := int64(7)
	pod := unitPod(withInits("proxy", "setup"), withSidecars("proxy"), withApps("app", "side"))
	rt := &pleg.Pod{UID: pod.UID,
		Sandboxes: []*pleg.Sandbox{{ID: "sb", State: pleg.SandboxReady}},
		Containers: []*pleg.Container{
			{ID: "c-app", SandboxID: "sb", Name: "app", State: pleg.ContainerRunning},
			{ID: "c-side", SandboxID: "sb", Name: "side", State: pleg.ContainerRunning},
			{ID: "c-proxy", SandboxID: "sb", Name: "proxy", State: pleg.ContainerRunning, Init: true},
			{ID: "c-old", SandboxID: "old", Name: "app", State: pleg.ContainerExited},
		},
	}
	liveness := &ProbeKill{Message: "Container app failed liveness probe, will be restarted"}
	startup := &ProbeKill{Message: "Container proxy failed startup probe, will be restarted", Grace: &grace}

	f := func(name string, probes ProbeState, want map[string]KillAction) {
		t.Helper()
		var plan ContainerPlan
		planUnhealthy(pod, rt, "sb", probes, &plan)
		if len(plan.Kill) != len(want) {
			t.Fatalf("%s: kills %+v, want %d", name, plan.Kill, len(want))
		}
		for _, k := range plan.Kill {
			w, ok := want[k.ID]
			if !ok || k.Name != w.Name || k.Event != w.Event || k.Reason != w.Event || (k.Grace == nil) != (w.Grace == nil) ||
				(k.Grace != nil && *k.Grace != *w.Grace) {
				t.Errorf("%s: kill %+v, want %+v", name, k, w)
			}
		}
	}
	f("no prober", nil, nil)
	f("all healthy", unhealthyProbes{}, nil)
	f("an app container's liveness failed", unhealthyProbes{"app": liveness},
		map[string]KillAction{"c-app": {Name: "app", Event: liveness.Message}})
	f("a sidecar's startup failed, with the probe's grace", unhealthyProbes{"proxy": startup},
		map[string]KillAction{"c-proxy": {Name: "proxy", Event: startup.Message, Grace: &grace}})
	f("a plain init container is never probed", unhealthyProbes{"setup": liveness}, nil)
}

// The plan stops an unhealthy container; the stop uses the probe's grace
// over the pod's, never under the minimum.
func TestKillGrace(t *testing.T) {
	one, ten := int64(1), int64(10)
	if g := killGrace(KillAction{}, 30e9); g != 30e9 {
		t.Errorf("no probe grace: %s", g)
	}
	if g := killGrace(KillAction{Grace: &ten}, 30e9); g != 10e9 {
		t.Errorf("probe grace 10: %s", g)
	}
	if g := killGrace(KillAction{Grace: &one}, 30e9); g != minKillGrace {
		t.Errorf("probe grace 1: %s, want %s", g, minKillGrace)
	}
}
