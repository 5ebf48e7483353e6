package prober

import (
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podline/podline/internal/monotime"
)

// Running is a container of the pod that runs now, as the runtime reports
// it. Container names are unique across a pod's init and app containers.
type Running struct {
	Name      string
	ID        string
	StartedAt time.Time
}

// Sync makes the pod's probes follow its running containers: a container
// seen with a new ID starts its probes afresh (results back to their
// initial values, the first run after initialDelaySeconds plus a random
// part of a period), one no longer running stops them. podIP is where
// probes without a host go: the pod's IP, which for a hostNetwork pod is
// the node's. A terminating pod (deletionTimestamp set) stops its liveness
// and startup probes at success, as the kubelet does, so a shutdown is
// never turned into a kill.
//
// Call it on every pass of the pod: when nothing changed it takes the lock,
// compares IDs and allocates nothing. It never calls Notify; the caller is
// in a pass already and reads Status after it.
func (m *Manager) Sync(pod *v1.Pod, podIP string, running []Running) {
	m.mu.Lock()
	defer m.mu.Unlock()
	pe := m.pods[pod.UID]
	if pe == nil {
		pe = m.newPod(pod)
		m.pods[pod.UID] = pe
	}
	pe.pod = pod
	pe.ip = podIP
	now := m.clock.Now()
	for _, c := range pe.containers {
		id, startedAt := "", time.Time{}
		for i := range running {
			if running[i].Name == c.name {
				id, startedAt = running[i].ID, running[i].StartedAt
				break
			}
		}
		if id != c.id {
			m.replaceContainer(c, id, startedAt, now)
		}
	}
	if pod.DeletionTimestamp != nil && !pe.terminating {
		pe.terminating = true
		m.stopForShutdown(pe, now)
	}
}

// Remove forgets the pod: its probes stop (a run in flight is thrown away)
// and its series leave Metrics.
func (m *Manager) Remove(uid types.UID) {
	m.mu.Lock()
	pe := m.pods[uid]
	if pe == nil {
		m.mu.Unlock()
		return
	}
	delete(m.pods, uid)
	var names []string
	for _, c := range pe.containers {
		for _, p := range c.probes {
			if p != nil {
				p.removed = true
				m.disarm(p)
				names = append(names, p.series.names()...)
			}
		}
	}
	m.mu.Unlock()
	release(names)
}

// newPod reads the pod's probes once (they are immutable).
func (m *Manager) newPod(pod *v1.Pod) *podEntry {
	pe := &podEntry{pod: pod}
	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		if c.RestartPolicy != nil && *c.RestartPolicy == v1.ContainerRestartPolicyAlways {
			// A sidecar: the only init container that may have probes,
			// and always restarted.
			pe.containers = append(pe.containers, m.newContainer(pe, c, true))
		}
	}
	for i := range pod.Spec.Containers {
		c := &pod.Spec.Containers[i]
		pe.containers = append(pe.containers, m.newContainer(pe, c, restarts(pod, c)))
	}
	return pe
}

func (m *Manager) newContainer(pe *podEntry, c *v1.Container, restart bool) *containerEntry {
	ce := &containerEntry{name: c.Name, restart: restart}
	specs := [numKinds]*v1.Probe{Liveness: c.LivenessProbe, Readiness: c.ReadinessProbe, Startup: c.StartupProbe}
	for k, ps := range specs {
		if ps == nil {
			continue
		}
		kind := Kind(k)
		ce.probes[k] = &probe{
			kind:    kind,
			pod:     pe,
			c:       ce,
			spec:    newSpec(kind, ps),
			handler: newHandler(ps, c, m.cfg.Exec),
			series:  newSeries(kind, c.Name, pe.pod.Name, pe.pod.Namespace, string(pe.pod.UID)),
			st:      newState(kind),
			index:   -1,
		}
	}
	return ce
}

// restarts: a container killed by a probe is started again unless its
// restart policy (its own, else the pod's) is Never.
func restarts(pod *v1.Pod, c *v1.Container) bool {
	if c.RestartPolicy != nil {
		return *c.RestartPolicy != v1.ContainerRestartPolicyNever
	}
	return pod.Spec.RestartPolicy != v1.RestartPolicyNever
}

// replaceContainer starts the container's probes afresh for instance id
// ("" when none runs). The first run is after initialDelaySeconds from the
// container's start plus a random part of a period, so the probes of
// containers started together (or of every pod, after podline restarts)
// do not all fall due at once.
//
// startedAt is the runtime's wall-clock stamp. Every due time is counted
// from it, so it is read against the clock once, here: kept as it came,
// a clock set back an hour would stop the container's probes for an hour.
// A start stamped after now (the clock was set back since) is now.
func (m *Manager) replaceContainer(c *containerEntry, id string, startedAt, now time.Time) {
	c.id, c.startedAt = id, monotime.AnchorNotAfter(startedAt, now)
	for _, p := range c.probes {
		if p == nil || p.stopped {
			continue
		}
		m.disarm(p)
		p.st = newState(p.kind)
		if id == "" {
			continue
		}
		p.due = later(c.startedAt.Add(p.spec.initialDelay), now).Add(m.jitter(p.spec.period))
		m.requeue(p)
	}
}

// stopForShutdown stands liveness and startup at success for good; a
// container now counted as started gets its readiness probe going.
func (m *Manager) stopForShutdown(pe *podEntry, now time.Time) {
	for _, c := range pe.containers {
		for _, k := range [...]Kind{Liveness, Startup} {
			if p := c.probes[k]; p != nil {
				m.disarm(p)
				p.stopped = true
				p.st = state{result: resultSuccess}
			}
		}
		m.armStarted(c, now)
	}
}

// armStarted arms the liveness and readiness probes of a container that
// has just started: at once, or when its initialDelaySeconds ends. No
// jitter: startups are spread already, and readiness should follow the
// startup probe's success, not lag it by up to a period.
func (m *Manager) armStarted(c *containerEntry, now time.Time) {
	if c.id == "" {
		return
	}
	for _, k := range [...]Kind{Liveness, Readiness} {
		if p := c.probes[k]; p != nil && !p.stopped && p.index < 0 {
			m.arm(p, later(c.startedAt.Add(p.spec.initialDelay), now))
		}
	}
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
