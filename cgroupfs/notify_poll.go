package cgroupfs

import (
	"errors"
	"path/filepath"
	"time"

	"github.com/VictoriaMetrics/metrics"
	"golang.org/x/sys/unix"
)

// When the inotify watch limit (fs.inotify.max_user_watches, shared by
// every process of the user) is reached, Watch does not fail: a cgroup
// whose cgroup.events or memory.events cannot be watched is polled by Run
// every pollEvery instead, and each poll tries the watch again, so the
// cgroup goes back to inotify once watches are free. The consumer sees the
// same notifications, at most a period late. Failing Watch instead would
// leave the container to the relist alone, minutes late, and the consumer
// could not tell "the limit" from "the cgroup is gone".

// notifyPollPeriod is how often polled cgroups are read: a missed exit
// costs at most this much, and a thousand polled cgroups cost a thousand
// small reads a second.
const notifyPollPeriod = time.Second

var (
	notifyPolledCgs  = metrics.NewGauge(`podline_cgroup_notify_polled_cgroups`, nil)
	notifyWatchLimit = metrics.NewCounter(`podline_cgroup_notify_watch_limit_total`)
)

// watchLimited reports whether an inotify_add_watch error is the user's
// watch limit (ENOSPC, as inotify_add_watch(2) documents it).
func watchLimited(err error) bool { return errors.Is(err, unix.ENOSPC) }

// pollLocked puts w, already in byID, on the polled list and wakes Run to
// start polling.
func (n *Notifier) pollLocked(w *watched) {
	if _, ok := n.polled[w.id]; ok {
		return
	}
	if len(n.polled) == 0 {
		n.log.Warn("inotify watch limit reached; polling cgroups that cannot be watched "+
			"(raise fs.inotify.max_user_watches)", "cgroup", w.dir, "period", n.pollEvery)
	}
	n.polled[w.id] = w
	notifyPolledCgs.Inc()
	select {
	case n.wake <- struct{}{}:
	default:
	}
}

// unpollLocked takes w off the polled list, if it is on it.
func (n *Notifier) unpollLocked(w *watched) {
	if n.polled[w.id] != w {
		return
	}
	delete(n.polled, w.id)
	notifyPolledCgs.Dec()
}

// polling reports whether Run must poll.
func (n *Notifier) polling() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return len(n.polled) > 0
}

// poll tries each polled cgroup's missing watches again, then reads its
// state as an inotify event would have made it. It runs on Run's
// goroutine.
func (n *Notifier) poll(now time.Time) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if len(n.polled) == 0 {
		return
	}
	rewatched := false
	for _, w := range n.polled {
		// Watch first, then read: a change between the two is seen.
		if w.pollEvents && n.addFileWatchLocked(w, filepath.Join(w.dir, "cgroup.events")) == nil {
			w.pollEvents = false
		}
		if w.pollMem && n.addFileWatchLocked(w, filepath.Join(w.dir, "memory.events")) == nil {
			w.pollMem = false
		}
		gone := n.checkPopulatedLocked(w, now)
		if w.memEvents {
			n.checkOOMLocked(w, now)
		}
		switch {
		case !w.pollEvents && !w.pollMem:
			rewatched = true
			n.unpollLocked(w)
		case gone:
			// Nothing more can happen in a removed cgroup; the consumer
			// unwatches it once it learns the container is gone.
			n.unpollLocked(w)
		}
	}
	if len(n.polled) == 0 && rewatched {
		n.log.Info("inotify watches available again; cgroup polling stopped")
	}
}
