package logs

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/fsnotify/fsnotify"
)

// Hub is what all followers of container logs share: one inotify
// instance and one clock. An inotify instance each would not do: the
// kernel allows a user 128 of them by default (fs.inotify.max_user_instances),
// shared with every other watcher on the node, so the 129th `kubectl logs
// -f` would fail; and a timer each would wake a thousand idle followers
// hundreds of times a second. With the hub an idle follower costs no
// wake-up: it sleeps until its directory changes or the hub's periodic
// check finds something for it.
//
// The zero Hub is ready to use. It holds the inotify instance and its
// goroutines only while someone follows, so it needs no closing.
type Hub struct {
	// mu serialises the watcher's life and its watch list: starting and
	// stopping it, adding and removing directories. Calls into the watcher
	// are made holding mu, never subs: the watcher can wait on the event
	// loop, and the event loop takes subs.
	mu        sync.Mutex
	run       *hubRun // nil while no one follows
	followers int

	// subs guards dirs, which the event loop and the check read.
	subs sync.RWMutex
	dirs map[string]*dirWatch

	// wakes counts the wake-ups handed to followers: what an idle
	// follower costs, and what tests look at.
	wakes atomic.Int64
}

// defaultHub serves Read.
var defaultHub Hub

// hubRun is the watcher and goroutines of one stretch of following.
type hubRun struct {
	w    *fsnotify.Watcher
	stop chan struct{}
	done sync.WaitGroup
}

// join makes the hub watch path's directory for a new follower.
func (h *Hub) join(path string, running func() bool) (*interest, error) {
	in := newInterest(path, running)
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.run == nil {
		r, err := h.start()
		if err != nil {
			return nil, err
		}
		h.run = r
	}
	d, err := h.watchDir(in.dir)
	if err != nil {
		if h.followers == 0 {
			h.shutdown()
		}
		return nil, err
	}
	h.subs.Lock()
	d.add(in)
	h.subs.Unlock()
	h.followers++
	return in, nil
}

// leave forgets a follower; the last one of a directory unwatches it, and
// the last one of all closes the watcher.
func (h *Hub) leave(in *interest) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.subs.Lock()
	empty := h.dirs[in.dir].remove(in)
	if empty {
		delete(h.dirs, in.dir)
	}
	h.subs.Unlock()
	h.followers--
	if h.followers == 0 {
		// Closing the instance drops its watches with it.
		h.shutdown()
		return
	}
	if empty {
		// An error is a watch the kernel already dropped (the directory
		// was renamed): nothing is left to remove.
		_ = h.run.w.Remove(in.dir)
	}
}

// start opens the inotify instance and starts the event loop and the
// check. h.mu is held.
func (h *Hub) start() (*hubRun, error) {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, fmt.Errorf("watch logs: %w", err)
	}
	r := &hubRun{w: w, stop: make(chan struct{})}
	r.done.Add(2)
	go func() {
		defer r.done.Done()
		h.dispatch(w)
	}()
	every := checkEvery
	go func() {
		defer r.done.Done()
		h.check(r.stop, every)
	}()
	return r, nil
}

// shutdown closes the watcher and waits for its goroutines. h.mu is held.
func (h *Hub) shutdown() {
	r := h.run
	h.run = nil
	close(r.stop)
	// The watcher's Close only fails on a descriptor already closed.
	_ = r.w.Close()
	r.done.Wait()
}

// watching lists the directories the hub has the kernel watch.
func (h *Hub) watching() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.run == nil {
		return nil
	}
	return h.run.w.WatchList()
}

// notify hands in news and wakes it, unless a wake-up is already
// pending: a follower needs to know that something changed, not how
// often.
func (h *Hub) notify(in *interest, news uint32) {
	in.news.Or(news)
	select {
	case in.wake <- struct{}{}:
		h.wakes.Add(1)
	default:
	}
}
