package pleg

import (
	"errors"
	"io/fs"
	"path/filepath"
	"time"

	"github.com/podline/podline/cgroupfs"
)

// The kernel's signals are taken as hints, never as the container's
// state. sched_process_exit reports any process that is pid 1 of its own
// pid namespace inside a watched cgroup, and a container may make one
// (unshare -Urpf sh -c 'exit 7') and let it exit while the container runs
// on; the OOM killer's victim may be any process of the container; only a
// cgroup that empties has lost them all. So a signal starts a round of
// targeted inspections (ContainerStatus of that one container), and only
// the runtime's answer changes the cache: what turns a pod Failed,
// restarts a container, lets the next init container start or tears a pod
// down rests on the runtime's word, as in the kubelet. The kernel still
// makes the change known early: the first look goes 15 ms after the
// signal, where a relist would wait for its period.
//
// A round ends when the runtime reports the container exited or gone, or
// after maxLooks answers that it runs (more while the cgroup is empty:
// then the runtime lags, see retry). An exit report the round could not
// see confirmed is dropped, counted and logged once per container. Reports
// that come while a round is under way join it, so a container forging
// exits in a loop costs the runtime one round at a time (12 looks in
// about 4 s), not a round per report. A round whose last look the runtime
// failed (restarting, timing out) did not hear it deny anything: it ends
// quietly and counts apart (see retry).

// beginRound starts a round of looks at w after d, unless one is under
// way. claim, when not nil, is a kernel exit report (its exit code) the
// round is to confirm. fresh reports whether a new round began.
func (p *Plane) beginRound(w *watched, d time.Duration, claim *int32) (fresh bool) {
	p.mu.Lock()
	if claim != nil {
		w.claimed, w.claim = true, *claim
	}
	fresh = !w.round
	if fresh {
		w.round, w.looks = true, 0
	}
	p.mu.Unlock()
	if fresh {
		p.looks.After(w.id, d)
	}
	return fresh
}

// restartRound starts the round over at once: the cgroup emptied, which a
// container cannot fake while it runs, so the runtime is asked again
// however many looks an earlier report used up.
func (p *Plane) restartRound(w *watched) {
	p.mu.Lock()
	w.round, w.looks = true, 0
	p.mu.Unlock()
	p.looks.After(w.id, 0)
}

// endRound closes w's round after the runtime confirmed a change.
func (p *Plane) endRound(w *watched) {
	p.mu.Lock()
	w.round, w.claimed = false, false
	p.mu.Unlock()
}

// retry looks again later while the runtime says the container runs (it
// lags the kernel: containerd reports an exit once its task is deleted,
// ~50 ms here, seconds under load), with waits growing by half; err is
// the look's error when the runtime did not answer. After maxLooks the
// round would end; while the cgroup is empty it does not: the container's
// processes are all gone, so the runtime lags, and it is asked every
// lagLook for up to lagLooks more times.
//
// A round that ends after the runtime said the container runs drops the
// exit report it carried: a forged exit leaves the cgroup populated. One
// whose last look failed heard no denial, and an operator who alerts on
// the dropped count as a sign of tampering must not be paged for every
// restart of containerd: it is counted in
// podline_pleg_kernel_exits_unanswered_total, said at debug level, and
// the exit, if real, is left to what lists the runtime once it answers:
// the runtime's own stopped event, or the resync after its event stream
// reconnects (a runtime that restarts breaks the stream); the relist that
// stands in for an absent stream; and in any case the safety relist, a
// period after the last relist, which also covers a runtime that timed
// out with its stream open or --pleg-sources without cri.
func (p *Plane) retry(w *watched, err error) {
	planeLagging.Inc()
	p.mu.Lock()
	w.looks++
	n := w.looks
	p.mu.Unlock()
	if n < p.maxLooks {
		d := p.firstLook
		for range n {
			d += d / 2
		}
		p.looks.After(w.id, d)
		return
	}
	if n < p.maxLooks+lagLooks && p.emptied(w) {
		p.looks.After(w.id, p.lagLook)
		return
	}
	p.mu.Lock()
	carried, code := w.claimed, w.claim
	first := carried && err == nil && !w.denied
	w.round, w.claimed = false, false
	if err == nil {
		w.denied = w.denied || carried
	}
	p.mu.Unlock()
	switch {
	case !carried:
		return
	case err != nil:
		planeExitsUnanswered.Inc()
		p.cfg.Log.Debug("the runtime did not answer the looks a kernel exit report set off; "+
			"the exit, if real, is left to the relist (podline_pleg_kernel_exits_unanswered_total)",
			"uid", w.uid, "container", shortID(w.id), "exitCode", code, "looks", n, "err", err)
		return
	}
	planeExitsDropped.Inc()
	if first {
		p.cfg.Log.Info("the kernel reported the exit of a container's main process that the runtime says still runs; "+
			"ignored: a process of the container that is pid 1 of a pid namespace of its own exited "+
			"(later reports for this container are counted in podline_pleg_kernel_exits_dropped_total)",
			"uid", w.uid, "container", shortID(w.id), "exitCode", code)
	}
}

// emptied reports whether w's cgroup is known to hold no process: its
// cgroup.events says so, or it is gone (a populated cgroup cannot be
// removed). Unreadable or unknown is not empty.
func (p *Plane) emptied(w *watched) bool {
	if w.path == "" || p.cfg.CgroupMount == "" {
		return false
	}
	live, err := cgroupfs.Populated(filepath.Join(p.cfg.CgroupMount, w.path))
	if errors.Is(err, fs.ErrNotExist) {
		return true
	}
	return err == nil && !live
}
