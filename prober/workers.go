package prober

import (
	"context"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// runWorker runs the probes the scheduler hands over until ctx ends. The
// pool is fixed: ten thousand probes cost ten thousand heap entries, not
// ten thousand goroutines and timers.
func (m *Manager) runWorker(ctx context.Context) {
	for {
		select {
		case p := <-m.work:
			m.runProbe(ctx, p)
		case <-ctx.Done():
			return
		}
	}
}

// report is what one finished run tells the world, gathered under the lock
// and delivered after it.
type report struct {
	pod       *v1.Pod
	container string
	uid       types.UID
	changed   bool
	reason    string
	message   string
}

func (m *Manager) runProbe(ctx context.Context, p *probe) {
	m.mu.Lock()
	if p.gen != p.runGen || !m.shouldRun(p) {
		// Changed between leaving the heap and reaching a worker.
		m.finish(p)
		m.mu.Unlock()
		return
	}
	gen := p.gen
	t := target{ip: p.pod.ip, containerID: p.c.id}
	m.mu.Unlock()

	start := m.clock.Now()
	out := safeRun(ctx, p.handler, t, p.spec.timeout)
	took := m.clock.Now().Sub(start)

	m.mu.Lock()
	if ctx.Err() != nil || p.gen != gen {
		// Shutting down, or the container this run probed is gone: its
		// verdict says nothing about the one there now.
		m.finish(p)
		m.mu.Unlock()
		return
	}
	r := m.complete(p, out, took)
	m.mu.Unlock()

	if r.reason != "" && m.cfg.Recorder != nil {
		m.cfg.Recorder.PodEvent(r.pod, r.container, v1.EventTypeWarning, r.reason, r.message)
	}
	if out.verdict == errored {
		m.cfg.Log.Debug("probe errored", "pod", r.pod.Namespace+"/"+r.pod.Name, "container", r.container,
			"probe", p.kind.String(), "err", out.err)
	}
	if r.changed && m.cfg.Notify != nil {
		m.cfg.Notify(r.uid)
	}
	// The run ends once its pod was told: until then it counts as running.
	m.mu.Lock()
	m.finish(p)
	m.mu.Unlock()
}

// finish ends a run: the probe goes back on the heap if it should run.
func (m *Manager) finish(p *probe) {
	p.inflight = false
	m.running--
	m.requeue(p)
}

// complete counts a valid run: metrics, thresholds, the next run, and a
// started container's other probes.
func (m *Manager) complete(p *probe, out outcome, took time.Duration) report {
	r := report{pod: p.pod.pod, container: p.c.name, uid: p.pod.pod.UID}
	r.reason, r.message, _ = runEvent(p.kind, out)
	// The kubelet times successful and unknown runs only: a failure is
	// most often a timeout, whose duration is the timeout itself.
	switch out.verdict {
	case succeeded, warned:
		p.series.counter(counterSuccessful).Inc()
		p.series.histogram().Update(took.Seconds())
		r.changed = p.st.record(p.kind, &p.spec, true)
	case failed:
		p.series.counter(counterFailed).Inc()
		r.changed = p.st.record(p.kind, &p.spec, false)
	case errored:
		p.series.counter(counterUnknown).Inc()
		p.series.histogram().Update(took.Seconds())
	}
	now := m.clock.Now()
	p.due = nextDue(p.runDue, p.spec.period, now)
	if p.kind == Startup && r.changed && p.st.result == resultSuccess {
		m.armStarted(p.c, now)
	}
	return r
}
