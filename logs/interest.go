package logs

import (
	"os"
	"path/filepath"
	"sync/atomic"
)

// News a follower is woken with, besides "something was written".
const (
	newsLook    uint32 = 1 << iota // the path may name another file
	newsStopped                    // the container stopped
)

// interest is one follower as the hub sees it: what it follows, how to
// wake it, and what it had when it went to sleep.
type interest struct {
	path, dir, base string
	running         func() bool
	// wake holds one pending wake-up; more while it is pending add
	// nothing, so the hub never waits on a slow follower.
	wake chan struct{}
	news atomic.Uint32
	seen atomic.Pointer[sight]
}

// sight is what a follower has of its path: the file it reads and how far,
// and the newer file at the path if a rotation made one. The hub's check
// compares the path with it to find a change no event told of.
type sight struct {
	cur  os.FileInfo
	off  int64
	next os.FileInfo
}

func newInterest(path string, running func() bool) *interest {
	return &interest{
		path:    path,
		dir:     filepath.Dir(path),
		base:    filepath.Base(path),
		running: running,
		wake:    make(chan struct{}, 1),
	}
}

// rest records what the follower has before it sleeps.
func (in *interest) rest(s *sight) { in.seen.Store(s) }

// take returns the news since the last take.
func (in *interest) take() uint32 { return in.news.Swap(0) }

// missed compares st, the file now at the path, with what the follower
// had when it went to sleep: wake is whether it has something to read,
// news whether it should look at the path again.
func (in *interest) missed(st os.FileInfo) (wake bool, news uint32) {
	s := in.seen.Load()
	switch {
	case s == nil:
		// Not asleep yet: it reads and looks before it is.
		return false, 0
	case os.SameFile(st, s.cur):
		return st.Size() > s.off, 0
	case s.next != nil && os.SameFile(st, s.next):
		// The follower moves on to next once the runtime writes to it.
		return st.Size() > 0, 0
	}
	return true, newsLook
}
