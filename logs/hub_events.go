package logs

import (
	"path/filepath"

	"github.com/fsnotify/fsnotify"
)

// dispatch hands w's events to the followers they concern until w is
// closed. It never waits on a follower: notify only marks and signals.
func (h *Hub) dispatch(w *fsnotify.Watcher) {
	for {
		select {
		case ev, ok := <-w.Events:
			if !ok {
				return
			}
			h.event(ev)
		case _, ok := <-w.Errors:
			if !ok {
				return
			}
			// An overflow dropped events, a rotation's Create among them
			// perhaps; whatever else went wrong, looking costs a stat.
			// Every follower looks.
			h.notifyAll(newsLook)
		}
	}
}

// event wakes the followers of the directory ev happened in. All of them,
// not only those of ev's name: a follower may still be reading a file the
// rotation renamed away, and the runtime's last writes to it come under
// the new name. A container's log directory holds that container's files
// only, so the others are few.
func (h *Hub) event(ev fsnotify.Event) {
	if ev.Op == fsnotify.Chmod {
		// Attributes: nothing to read, no file to look for.
		return
	}
	dir, base := filepath.Dir(ev.Name), filepath.Base(ev.Name)
	h.subs.RLock()
	defer h.subs.RUnlock()
	d := h.dirs[dir]
	if d == nil {
		return
	}
	for name, ins := range d.files {
		var news uint32
		if name == base && ev.Has(fsnotify.Create|fsnotify.Rename|fsnotify.Remove) {
			// The path may name another file now.
			news = newsLook
		}
		for in := range ins {
			h.notify(in, news)
		}
	}
}

// notifyAll wakes every follower with news.
func (h *Hub) notifyAll(news uint32) {
	h.subs.RLock()
	defer h.subs.RUnlock()
	for _, d := range h.dirs {
		h.notifyDir(d, news)
	}
}
