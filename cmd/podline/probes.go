package main

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podline/podline/prober"
	"github.com/podline/podline/stages"
)

// probes hands the stages' view of probing to the prober. A pod without
// any probe never reaches it: its running containers are started and
// ready, and it costs the prober nothing.
type probes struct{ m *prober.Manager }

var _ stages.Prober = probes{}

func (p probes) Sync(pod *v1.Pod, podIP string, running []stages.RunningContainer) {
	if !hasProbes(pod) {
		return
	}
	rs := make([]prober.Running, len(running))
	for i, c := range running {
		rs[i] = prober.Running{Name: c.Name, ID: c.ID, StartedAt: c.StartedAt}
	}
	p.m.Sync(pod, podIP, rs)
}

// State is nil for a pod the prober does not run probes for: its running
// containers are started and ready.
func (p probes) State(uid types.UID) stages.ProbeState {
	if !p.m.Knows(uid) {
		return nil
	}
	return podProbes{p.m, uid}
}

func (p probes) Forget(uid types.UID) { p.m.Remove(uid) }

// podProbes answers for one pod the prober knows.
type podProbes struct {
	m   *prober.Manager
	uid types.UID
}

func (p podProbes) Started(name string) bool { return p.m.Status(p.uid, name).Started }
func (p podProbes) Ready(name string) bool   { return p.m.Status(p.uid, name).Ready }

func (p podProbes) Unhealthy(name string) *stages.ProbeKill {
	st := p.m.Status(p.uid, name)
	if st.Kill == nil {
		return nil
	}
	return &stages.ProbeKill{Message: st.Kill.Message, Grace: st.Kill.GracePeriod}
}

// hasProbes reports whether any app container or sidecar of the pod has
// a probe.
func hasProbes(pod *v1.Pod) bool {
	probed := func(c *v1.Container) bool {
		return c.LivenessProbe != nil || c.ReadinessProbe != nil || c.StartupProbe != nil
	}
	for i := range pod.Spec.Containers {
		if probed(&pod.Spec.Containers[i]) {
			return true
		}
	}
	for i := range pod.Spec.InitContainers {
		if probed(&pod.Spec.InitContainers[i]) {
			return true
		}
	}
	return false
}
