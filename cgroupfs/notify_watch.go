package cgroupfs

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"
	"golang.org/x/sys/unix"
)

// Watch starts watching one container cgroup and returns its cgroup id.
// path is relative to the hierarchy roots
// ("/kubepods/besteffort/pod<uid>/<containerID>"): the cgroup2 directory
// is that path under the cgroup2 mount and, with v1 memory, the memory
// directory is that path under the memory mount; both must exist (else the
// error wraps fs.ErrNotExist).
//
// A container may exit before podline watches it, so the state is read
// after the watch is in place: an already empty cgroup gets an Emptied at
// once, and an oom_kill counter already above zero an OOMKill (before the
// Emptied). Watching a watched cgroup again returns its id.
func (n *Notifier) Watch(path string) (id uint64, err error) {
	rel := filepath.Clean("/" + path) // never leaves the mounts
	dir := filepath.Join(n.cgroup2, rel)
	if id, err = CgroupID(dir); err != nil {
		return 0, fmt.Errorf("watch cgroup %s: %w", path, err)
	}

	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		return 0, fmt.Errorf("watch cgroup %s: %w", path, ErrNotifierClosed)
	}
	if _, ok := n.byID[id]; ok {
		return id, nil
	}
	w := &watched{id: id, dir: dir, efd: -1}
	defer func() {
		if err != nil {
			n.releaseLocked(w)
		}
	}()

	// Watches first, then the first read: a change between the two is seen
	// by both and the state comparison reports it once.
	if err := n.addFileWatchLocked(w, filepath.Join(dir, "cgroup.events")); err != nil {
		if !watchLimited(err) {
			return 0, fmt.Errorf("watch cgroup %s: %w", path, err)
		}
		notifyWatchLimit.Inc()
		w.pollEvents = true
	}
	if n.memoryV1 != "" {
		w.memDir = filepath.Join(n.memoryV1, rel)
		efd, key, err := n.oom.register(w.memDir)
		if err != nil {
			return 0, fmt.Errorf("watch cgroup %s: %w", path, err)
		}
		w.efd, w.oomKey = efd, key
		n.byOOM[key] = w
	} else if _, err := os.Stat(filepath.Join(dir, "memory.events")); err == nil {
		if err := n.addFileWatchLocked(w, filepath.Join(dir, "memory.events")); err != nil {
			if !watchLimited(err) {
				return 0, fmt.Errorf("watch cgroup %s: %w", path, err)
			}
			notifyWatchLimit.Inc()
			w.pollMem = true
		}
		w.memEvents = true
	}

	populated, err := Populated(dir)
	if err != nil {
		return 0, fmt.Errorf("watch cgroup %s: %w", path, err)
	}
	now := time.Now()
	if kills, err := n.readKills(w); err == nil && kills > 0 {
		w.kills = kills
		n.queueLocked(OOMKill, w, now)
	}
	w.populated = populated
	if !populated {
		n.queueLocked(Emptied, w, now)
	}
	n.byID[id] = w
	notifyWatchedCgs.Inc()
	if w.pollEvents || w.pollMem {
		n.pollLocked(w)
	}
	return id, nil
}

func (n *Notifier) addFileWatchLocked(w *watched, file string) error {
	n.byFile[file] = w
	if err := n.addWatch(file); err != nil {
		delete(n.byFile, file)
		if errors.Is(err, fsnotify.ErrClosed) {
			return ErrNotifierClosed
		}
		return fmt.Errorf("inotify %s: %w", file, err)
	}
	return nil
}

// Unwatch stops watching a cgroup and releases its inotify watches and
// eventfd. Notifications for id still queued are dropped; one Run is
// handing to out at that moment may still arrive, so consumers ignore ids
// they no longer know. A removed cgroup must be unwatched too: the kernel
// keeps the inotify watch of a deleted cgroup file until it is removed.
func (n *Notifier) Unwatch(id uint64) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.unwatchLocked(id)
}

func (n *Notifier) unwatchLocked(id uint64) {
	w, ok := n.byID[id]
	if !ok {
		return
	}
	delete(n.byID, id)
	n.releaseLocked(w)
	n.dropPendingLocked(id)
	notifyWatchedCgs.Dec()
}

// releaseLocked undoes whatever part of Watch succeeded.
func (n *Notifier) releaseLocked(w *watched) {
	for _, name := range []string{"cgroup.events", "memory.events"} {
		file := filepath.Join(w.dir, name)
		if n.byFile[file] != w {
			continue
		}
		delete(n.byFile, file)
		// ErrNonExistentWatch: the kernel already dropped it.
		if err := n.fsw.Remove(file); err != nil && !errors.Is(err, fsnotify.ErrNonExistentWatch) && !errors.Is(err, unix.EINVAL) {
			n.log.Debug("remove inotify watch", "file", file, "err", err)
		}
	}
	n.releaseOOMLocked(w)
	n.unpollLocked(w)
}
