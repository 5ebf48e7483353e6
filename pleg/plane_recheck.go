package pleg

import (
	"path/filepath"

	"github.com/podline/podline/cgroupfs"
)

// Recheck reads every watched cgroup after a source lost events (the eBPF
// ring buffer was full) and inspects each one found empty, as if its
// event had come. It returns how many it found empty.
//
// A relist alone does not close that gap: the kernel tells of an exit
// before the runtime does (containerd about 100 ms later, seconds under
// load), so a relist made as the reader catches up can find the container
// still running, and the lost event was the only one that would have
// asked again. The cgroup is the kernel's own answer, and the inspection
// retries while the runtime lags. Its cost is one small read per watched
// cgroup, paid only after a loss.
func (p *Plane) Recheck() int {
	p.mu.Lock()
	ws := make([]*watched, 0, len(p.byCgroup))
	for _, w := range p.byCgroup {
		ws = append(ws, w)
	}
	p.mu.Unlock()
	empty := 0
	for _, w := range ws {
		// Gone or unreadable counts as empty: a populated cgroup cannot
		// be removed.
		if live, err := cgroupfs.Populated(filepath.Join(p.cfg.CgroupMount, w.path)); err == nil && live {
			continue
		}
		empty++
		p.restartRound(w)
	}
	return empty
}
