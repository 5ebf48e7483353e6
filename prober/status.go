package prober

import "k8s.io/apimachinery/pkg/types"

// Status is what the probes of the pod's container say now, for the
// container instance last given to Sync. A pod never synced, or a name not
// among its app containers and sidecars, reads as not running.
func (m *Manager) Status(uid types.UID, container string) ContainerProbeStatus {
	m.mu.Lock()
	in, ok := m.decideInput(uid, container)
	m.mu.Unlock()
	if !ok {
		return ContainerProbeStatus{}
	}
	return decide(in)
}

func (m *Manager) decideInput(uid types.UID, container string) (decideInput, bool) {
	pe := m.pods[uid]
	if pe == nil {
		return decideInput{}, false
	}
	for _, c := range pe.containers {
		if c.name != container {
			continue
		}
		in := decideInput{name: c.name, running: c.id != "", restart: c.restart}
		for k, p := range c.probes {
			if p != nil {
				in.probes[k] = probeView{has: true, result: p.st.result, grace: p.spec.grace}
			}
		}
		return in, true
	}
	return decideInput{}, false
}

// Knows reports whether the pod was given to Sync and not removed since.
func (m *Manager) Knows(uid types.UID) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.pods[uid] != nil
}
