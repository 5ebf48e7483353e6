package pleg

import (
	"time"

	"github.com/podline/podline/cri"
)

// OnExit handles the kernel's report that a container's main process
// exited with exitCode (CRI convention: 128+signal when killed). The
// cache learns the exit at once, so the pipeline acts within microseconds
// of the kernel; an inspection then confirms it with the runtime.
func (p *Plane) OnExit(cgroupID uint64, exitCode int32, at time.Time) {
	w := p.lookup(cgroupID)
	if w == nil {
		return
	}
	planeExits.Inc()
	if w.sandbox {
		p.looks.After(w.id, 0)
		return
	}
	if cur := p.cfg.Cache.Get(w.uid).Container(w.id); cur != nil && cur.State != ContainerExited {
		exited := *cur
		exited.State = ContainerExited
		exited.ExitCode = exitCode
		exited.FinishedAt = at
		exited.Reason = exitReason(exitCode, p.oomSeen(w))
		exited.Message = ""
		exited.Detailed = false
		if p.cfg.Cache.UpsertContainer(w.uid, &exited) {
			p.cfg.Notify(w.uid)
		}
	}
	p.looks.After(w.id, firstLook)
}

// exitReason names an exit as the runtime would.
func exitReason(code int32, oom bool) string {
	switch {
	case oom && code == 137:
		return "OOMKilled"
	case code == 0:
		return "Completed"
	}
	return "Error"
}

// OnOOM handles an OOM kill. A victim outside every registered cgroup is
// a system OOM: counted, logged, and passed on.
func (p *Plane) OnOOM(cgroupID uint64, pid uint32, at time.Time) {
	w := p.lookup(cgroupID)
	if w == nil {
		systemOOMs.Inc()
		p.cfg.Log.Warn("system OOM: the kernel killed a process outside any pod", "pid", pid)
		if p.cfg.OnSystemOOM != nil {
			p.cfg.OnSystemOOM(pid, at)
		}
		return
	}
	// Both the kernel tracer and the cgroup notifier report the same kill:
	// count it once per container.
	p.mu.Lock()
	first := !w.oom
	w.oom = true
	p.mu.Unlock()
	if first {
		containerOOMs.Inc()
		p.cfg.Log.Info("OOM kill in a container", "uid", w.uid, "container", shortID(w.id), "pid", pid)
		if p.cfg.OnContainerOOM != nil && !w.sandbox {
			p.cfg.OnContainerOOM(w.uid, w.id, pid, at)
		}
	}
}

// OnEmptied handles a cgroup that lost its last process: the container
// (or sandbox) is gone, and only the runtime knows how it ended.
func (p *Plane) OnEmptied(cgroupID uint64, at time.Time) {
	w := p.lookup(cgroupID)
	if w == nil {
		return
	}
	planeEmptied.Inc()
	p.looks.After(w.id, 0)
}

func (p *Plane) oomSeen(w *watched) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return w.oom
}

// startInspection runs one inspection without holding up the timer queue.
func (p *Plane) startInspection(id string) {
	p.sem <- struct{}{}
	go func() {
		defer func() { <-p.sem }()
		p.inspect(id)
	}()
}

// inspect asks the runtime about one container or sandbox and merges the
// answer. A runtime that has not yet seen an exit the kernel reported is
// asked again, a little later each time.
func (p *Plane) inspect(id string) {
	p.mu.Lock()
	w := p.byID[id]
	var snapshot watched
	if w != nil {
		snapshot = *w
	}
	p.mu.Unlock()
	if w == nil {
		return
	}
	planeInspections.Inc()
	if snapshot.sandbox {
		p.inspectSandbox(&snapshot)
		return
	}
	st, err := p.cfg.Runtime.ContainerStatus(p.ctx, id)
	switch {
	case cri.IsNotFound(err):
		if p.cfg.Cache.RemoveContainer(snapshot.uid, id) {
			p.cfg.Notify(snapshot.uid)
		}
		p.forget(id)
		return
	case err != nil:
		p.retry(w)
		return
	}
	obs := ContainerFromStatus(st, snapshot.sandboxID)
	if obs.State != ContainerExited {
		p.retry(w)
		return
	}
	if snapshot.oom && obs.ExitCode == 137 && obs.Reason != "OOMKilled" {
		obs.Reason = "OOMKilled"
	}
	if p.cfg.Cache.UpsertContainer(snapshot.uid, obs) {
		p.cfg.Notify(snapshot.uid)
	}
}

func (p *Plane) inspectSandbox(w *watched) {
	st, err := p.cfg.Runtime.PodSandboxStatus(p.ctx, w.id)
	switch {
	case cri.IsNotFound(err):
		if p.cfg.Cache.RemoveSandbox(w.uid, w.id) {
			p.cfg.Notify(w.uid)
		}
		return
	case err != nil:
		return
	}
	obs := SandboxFromStatus(st)
	if obs.State == SandboxReady {
		p.mu.Lock()
		live := p.byID[w.id]
		p.mu.Unlock()
		if live != nil {
			p.retry(live)
		}
		return
	}
	if p.cfg.Cache.UpsertSandbox(w.uid, "", "", obs) {
		p.cfg.Notify(w.uid)
	}
}

// retry looks again later while the runtime lags behind the kernel; after
// a few tries the safety relist has the last word.
func (p *Plane) retry(w *watched) {
	p.mu.Lock()
	w.looks++
	n := w.looks
	p.mu.Unlock()
	planeLagging.Inc()
	if n < maxLookAttempts {
		d := firstLook
		for range n {
			d += d / 2
		}
		p.looks.After(w.id, d)
	}
}

// SystemOOMs returns how many OOM kills outside any pod were seen.
func SystemOOMs() uint64 { return systemOOMs.Get() }
