package logs

import (
	"os"
	"time"
)

// checkEvery is how often the hub asks whether each followed container
// still runs and looks at each path for a change it was not told of. It
// bounds how long `kubectl logs -f` hangs on after the container exits.
// One check for all followers: between checks the hub sleeps on one
// ticker, and a check wakes only the followers it has news for.
var checkEvery = 2 * time.Second

// check runs the periodic check until stop is closed.
func (h *Hub) check(stop <-chan struct{}, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	var batch []*interest
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		// The followers are checked outside the lock: running is the
		// caller's function, and stats take time with a thousand paths.
		batch = h.snapshot(batch[:0])
		h.checkAll(batch)
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

// checkAll wakes the followers of batch whose container stopped or whose
// path shows a change they have not seen.
func (h *Hub) checkAll(batch []*interest) {
	var (
		path string
		st   os.FileInfo
		err  error
	)
	for _, in := range batch {
		if in.path != path {
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
		if err == nil {
			w, n := in.missed(st)
			wake, news = wake || w, news|n
		}
		if wake {
			h.notify(in, news)
		}
	}
}
