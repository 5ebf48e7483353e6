package cgroupfs

import (
	"errors"
	"io/fs"
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"
	"golang.org/x/sys/unix"
)

// The kernel signals a change of cgroup.events and memory.events as an
// inotify IN_MODIFY (kernfs_notify). It defers a change that comes within
// ~10 ms of the previous one instead of dropping it, and every event is
// followed by a fresh read, so the last state is never missed; a change
// and its undo between two reads (populated 0 → 1 → 0) can go unseen,
// which a container cgroup, populated once and emptied once, never does.

// onFileEvent handles one inotify event; it runs on Run's goroutine.
func (n *Notifier) onFileEvent(ev fsnotify.Event) {
	if !ev.Has(fsnotify.Write) {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	w := n.byFile[ev.Name]
	if w == nil {
		return // unwatched while the event was queued
	}
	now := time.Now()
	if filepath.Base(ev.Name) == "memory.events" {
		n.checkOOMLocked(w, now)
		return
	}
	n.checkPopulatedLocked(w, now)
}

// checkPopulatedLocked re-reads cgroup.events and queues Emptied on a
// populated 1 → 0 transition. cgroup.events also changes for other
// reasons (frozen), which compare equal here.
//
// A cgroup that is gone was emptied first (the kernel refuses to remove a
// populated one): it reports gone, and an Emptied if it was populated.
// inotify sees the emptying before the removal, but a poll (or the
// re-read after a queue overflow) mostly comes after the runtime already
// removed an exited container's cgroup, which takes it milliseconds.
func (n *Notifier) checkPopulatedLocked(w *watched, now time.Time) (gone bool) {
	populated, err := Populated(w.dir)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, unix.ENODEV) {
			n.log.Warn("read cgroup.events", "cgroup", w.dir, "err", err)
			return false
		}
		gone, populated = true, false
	}
	if w.populated && !populated {
		// The kill precedes the victim's exit: report it first, even if
		// the eventfd's recheck has not seen the counter grow yet.
		n.checkOOMLocked(w, now)
		n.queueLocked(Emptied, w, now)
	}
	w.populated = populated
	return gone
}

// onWatcherError handles an inotify error. On a queue overflow events were
// lost, so every watched cgroup is read again.
func (n *Notifier) onWatcherError(err error) {
	if !errors.Is(err, fsnotify.ErrEventOverflow) {
		n.log.Warn("cgroup inotify", "err", err)
		return
	}
	notifyOverflows.Inc()
	n.mu.Lock()
	defer n.mu.Unlock()
	n.log.Warn("cgroup inotify queue overflowed, re-reading every watched cgroup "+
		"(raise fs.inotify.max_queued_events)", "cgroups", len(n.byID))
	now := time.Now()
	for _, w := range n.byID {
		n.checkPopulatedLocked(w, now)
		if w.memEvents {
			n.checkOOMLocked(w, now)
		}
	}
}
