package logs

import (
	"os"
	"time"
)

// checkEvery is how often the hub asks whether each followed container
// still runs. It bounds how long `kubectl logs -f` hangs on after the
// container exits. One check for all followers: between checks the hub
// sleeps on one ticker, and a check wakes only the followers it has news
// for.
var checkEvery = 2 * time.Second

// statEvery is how many checks pass between two looks at every followed
// path for a change inotify did not tell of. Events are the way news
// comes, and an overflow, the one way the kernel drops them, already
// makes every follower look; the look is a net under that, and a stat a
// follower is what 1,000 idle followers cost (0.5 % of a core at every
// check on the project's VM), so it comes rarely: every 30 s.
var statEvery = 15

// check runs the periodic check until stop is closed.
func (h *Hub) check(stop <-chan struct{}, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	var batch []*interest
	for n := 1; ; n++ {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		// The followers are checked outside the lock: running is the
		// caller's function, and stats take time with a thousand paths.
		batch = h.snapshot(batch[:0])
		h.checkAll(batch, n%statEvery == 0)
		clear(batch)
	}
}

// snapshot appends every follower to batch, followers of one file next to
// each other.
func (h *Hub) snapshot(batch []*interest) []*interest {
	h.subs.RLock()
	defer h.subs.RUnlock()
	for _, d := range h.dirs {
		for _, ins := range d.files {
			for in := range ins {
				batch = append(batch, in)
			}
		}
	}
	return batch
}

// checkAll wakes the followers of batch whose container stopped, and
// with look, those whose path shows a change they have not seen.
func (h *Hub) checkAll(batch []*interest, look bool) {
	var (
		path string
		st   os.FileInfo
		err  error
	)
	for _, in := range batch {
		if look && in.path != path {
			// One stat serves all the followers of a file.
			path = in.path
			st, err = os.Stat(path)
		}
		var news uint32
		if in.running != nil && !in.running() {
			news |= newsStopped
		}
		wake := news != 0
		// A path not there is a rotation half done: its Create will come,
		// or the next check sees the new file.
		if look && err == nil {
			w, n := in.missed(st)
			wake, news = wake || w, news|n
		}
		if wake {
			h.notify(in, news)
		}
	}
}
