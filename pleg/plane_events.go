package pleg

import (
	"time"

	"github.com/podline/podline/cri"
)

// OnExit handles the kernel's report that a process that is pid 1 of a
// pid namespace exited in a watched cgroup with exitCode (CRI convention:
// 128+signal when killed). That is the container's main process, or one
// the container made in a namespace of its own: the report starts a round
// of looks at the runtime (plane_round.go), and only the runtime's answer,
// its exit code included, reaches the cache.
func (p *Plane) OnExit(cgroupID uint64, exitCode int32, at time.Time) {
	w := p.lookup(cgroupID)
	if w == nil {
		return
	}
	planeExits.Inc()
	if w.sandbox {
		p.beginRound(w, 0, nil)
		return
	}
	p.beginRound(w, p.firstLook, &exitCode)
}

// OnOOM handles an OOM kill. A victim outside every registered cgroup is
// a system OOM: counted, logged, and passed on. A victim in a container
// changes nothing by itself (it may be a child while the main process
// runs on): it names the reason of an exit the runtime later reports as
// a SIGKILL.
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
	p.restartRound(w)
}

// startInspection runs one inspection without holding up the timer queue,
// one at a time per container: a look that falls due while one runs (an
// emptied cgroup restarting the round, say) is taken when it ends.
func (p *Plane) startInspection(id string) {
	p.mu.Lock()
	w := p.byID[id]
	switch {
	case w == nil:
		p.mu.Unlock()
		return
	case w.inspecting:
		w.again = true
		p.mu.Unlock()
		return
	}
	w.inspecting = true
	p.mu.Unlock()
	p.sem <- struct{}{}
	go func() {
		defer func() { <-p.sem }()
		p.inspect(id)
		p.mu.Lock()
		again := w.again && p.byID[id] == w
		w.inspecting, w.again = false, false
		p.mu.Unlock()
		if again {
			p.looks.After(id, 0)
		}
	}()
}

// inspect asks the runtime about one container or sandbox and merges the
// answer if it reports a change; otherwise the round goes on.
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
		p.inspectSandbox(w, &snapshot)
		return
	}
	st, err := p.cfg.Runtime.ContainerStatus(p.ctx, id)
	switch {
	case cri.IsNotFound(err):
		p.endRound(w)
		if p.cfg.Cache.RemoveContainer(snapshot.uid, id) {
			p.cfg.Notify(snapshot.uid)
		}
		p.forget(id)
		return
	case err != nil:
		p.retry(w, err)
		return
	}
	obs := ContainerFromStatus(st, snapshot.sandboxID)
	if obs.State != ContainerExited {
		p.retry(w, nil)
		return
	}
	p.endRound(w)
	if snapshot.claimed && snapshot.claim != obs.ExitCode {
		// The runtime's code wins: the kernel's report may have been a
		// nested namespace's pid 1 exiting before the container did.
		p.cfg.Log.Debug("the runtime's exit code differs from the kernel's", "uid", snapshot.uid,
			"container", shortID(id), "runtime", obs.ExitCode, "kernel", snapshot.claim)
	}
	// containerd names an OOM kill only if its own OOM event came before
	// the exit; the kernel saw it for sure. A SIGKILL after an OOM kill in
	// the cgroup is the OOM killer's, as containerd reports it too once
	// its event is in.
	if snapshot.oom && obs.ExitCode == 137 && obs.Reason != "OOMKilled" {
		obs.Reason = "OOMKilled"
	}
	if p.cfg.Cache.UpsertContainer(snapshot.uid, obs) {
		p.cfg.Notify(snapshot.uid)
	}
}

func (p *Plane) inspectSandbox(live, w *watched) {
	st, err := p.cfg.Runtime.PodSandboxStatus(p.ctx, w.id)
	switch {
	case cri.IsNotFound(err):
		p.endRound(live)
		if p.cfg.Cache.RemoveSandbox(w.uid, w.id) {
			p.cfg.Notify(w.uid)
		}
		return
	}
	if err != nil {
		p.retry(live, err)
		return
	}
	obs := SandboxFromStatus(st)
	if obs.State == SandboxReady {
		p.retry(live, nil)
		return
	}
	p.endRound(live)
	if p.cfg.Cache.UpsertSandbox(w.uid, "", "", obs) {
		p.cfg.Notify(w.uid)
	}
}

// SystemOOMs returns how many OOM kills outside any pod were seen.
func SystemOOMs() uint64 { return systemOOMs.Get() }

// KernelExitsDropped returns how many kernel exit reports the runtime
// denied (podline_pleg_kernel_exits_dropped_total).
func KernelExitsDropped() uint64 { return planeExitsDropped.Get() }
