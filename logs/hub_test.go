package logs

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"
)

// inotifyInstances counts the process's inotify instances, which the
// kernel limits per user (fs.inotify.max_user_instances, 128 by default).
func inotifyInstances(t *testing.T) int {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, fd := range fds {
		if l, _ := os.Readlink(filepath.Join("/proc/self/fd", fd.Name())); l == "anon_inode:inotify" {
			n++
		}
	}
	return n
}

// crowd is many followers of many files, each file starting with one line.
type crowd struct {
	paths  []string
	ws     []*syncWriter
	cancel context.CancelFunc
	done   chan error
}

// startCrowd starts n followers through h of n files spread over dirs
// directories, and waits until each has read its file.
func startCrowd(t *testing.T, h *Hub, n, dirs int, running func() bool) *crowd {
	t.Helper()
	root := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	c := &crowd{cancel: cancel, done: make(chan error, n)}
	t.Cleanup(cancel)
	for i := range n {
		dir := filepath.Join(root, fmt.Sprintf("pod%d", i%dirs))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, fmt.Sprintf("%d.log", i))
		if err := os.WriteFile(path, []byte(cri(0, "stdout", "F", "hello")), 0o640); err != nil {
			t.Fatal(err)
		}
		w := newSyncWriter()
		c.paths, c.ws = append(c.paths, path), append(c.ws, w)
		go func() { c.done <- h.Read(ctx, root, path, Options{Follow: true}, w, running) }()
	}
	for _, w := range c.ws {
		w.waitFor(t, "hello\n")
	}
	return c
}

// stop cancels the followers and waits for all of them to return.
func (c *crowd) stop(t *testing.T) {
	t.Helper()
	c.cancel()
	deadline := time.After(10 * time.Second)
	for range c.ws {
		select {
		case err := <-c.done:
			if !errors.Is(err, context.Canceled) {
				t.Errorf("Read after cancel = %v, want context.Canceled", err)
			}
		case <-deadline:
			t.Fatal("followers did not return")
		}
	}
}

func TestHubThousandFollowers(t *testing.T) {
	setCheckEvery(t, time.Hour)
	var h Hub
	before := inotifyInstances(t)
	c := startCrowd(t, &h, 1000, 100, nil)
	// Far more followers than the default fs.inotify.max_user_instances,
	// on one instance.
	if n := inotifyInstances(t) - before; n > 1 {
		t.Errorf("1000 followers opened %d inotify instances, want 1", n)
	}
	if n := len(h.watching()); n != 100 {
		t.Errorf("hub watches %d directories, want 100", n)
	}
	for i, path := range c.paths {
		appendLog(t, path, cri(1, "stdout", "F", fmt.Sprint("line ", i)))
	}
	for i, w := range c.ws {
		w.waitFor(t, fmt.Sprint("hello\nline ", i, "\n"))
	}
	c.stop(t)
	if n := inotifyInstances(t); n != before {
		t.Errorf("%d inotify instances after the followers left, want %d", n, before)
	}
}

func TestHubUnwatchesWhenFollowersLeave(t *testing.T) {
	setCheckEvery(t, time.Hour)
	var h Hub
	before := inotifyInstances(t)
	a := startCrowd(t, &h, 4, 2, nil)
	b := startCrowd(t, &h, 2, 1, nil)
	if n := len(h.watching()); n != 3 {
		t.Fatalf("hub watches %q, want 3 directories", h.watching())
	}
	a.stop(t)
	// The last follower of a directory unwatches it.
	if got, want := h.watching(), []string{filepath.Dir(b.paths[0])}; !slices.Equal(got, want) {
		t.Errorf("hub watches %q, want %q", got, want)
	}
	b.stop(t)
	// The last follower of all closes the instance.
	if got := h.watching(); got != nil {
		t.Errorf("hub watches %q with no one following", got)
	}
	if len(h.dirs) != 0 || h.followers != 0 {
		t.Errorf("hub keeps %d directories and %d followers with no one following", len(h.dirs), h.followers)
	}
	if n := inotifyInstances(t); n != before {
		t.Errorf("%d inotify instances after the followers left, want %d", n, before)
	}
}

func TestHubIdleCost(t *testing.T) {
	if testing.Short() {
		t.Skip("idles for 2s")
	}
	// Checks far more often than in earnest, to show they wake no one.
	every := 200 * time.Millisecond
	setCheckEvery(t, every)
	var h Hub
	const n = 1000
	c := startCrowd(t, &h, n, 100, func() bool { return true })
	// Let the followers settle into their wait, and their start's garbage
	// be collected.
	time.Sleep(2 * every)
	runtime.GC()
	wakes, cpu := h.wakes.Load(), cpuTime(t)
	const idle = 2 * time.Second
	time.Sleep(idle)
	wakes, cpu = h.wakes.Load()-wakes, cpuTime(t)-cpu
	t.Logf("%d idle followers, checked every %v: %v of CPU in %v, %d wake-ups", n, every, cpu, idle, wakes)
	// A follower woken by every check would make n*10 wake-ups.
	if wakes >= n/10 {
		t.Errorf("%d idle followers were woken %d times in %v", n, wakes, idle)
	}
	c.stop(t)
}

func cpuTime(t *testing.T) time.Duration {
	t.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// joinAll makes n followers of files in dir join h, without reading.
func joinAll(t *testing.T, h *Hub, dir string, n int) []*interest {
	t.Helper()
	var ins []*interest
	for i := range n {
		in, err := h.join(filepath.Join(dir, fmt.Sprintf("%d.log", i)), nil)
		if err != nil {
			t.Fatal(err)
		}
		ins = append(ins, in)
		t.Cleanup(func() { h.leave(in) })
	}
	return ins
}

func TestHubCoalescesAndOverflowWakesAll(t *testing.T) {
	setCheckEvery(t, time.Hour)
	var h Hub
	dir := t.TempDir()
	ins := joinAll(t, &h, dir, 3)
	w := &fsnotify.Watcher{Events: make(chan fsnotify.Event), Errors: make(chan error)}
	done := make(chan struct{})
	go func() { h.dispatch(w); close(done) }()
	// Many writes to one file make one pending wake-up for each follower
	// of the directory, and only a write: nothing to look for.
	for range 10 {
		w.Events <- fsnotify.Event{Name: filepath.Join(dir, "0.log"), Op: fsnotify.Write}
	}
	// A rotation's Create is news for the followers of that name only.
	w.Events <- fsnotify.Event{Name: filepath.Join(dir, "1.log"), Op: fsnotify.Create}
	close(w.Events)
	<-done
	for i, in := range ins {
		if len(in.wake) != 1 {
			t.Errorf("follower %d has %d wake-ups pending, want 1", i, len(in.wake))
		}
		<-in.wake
		want := uint32(0)
		if i == 1 {
			want = newsLook
		}
		if news := in.take(); news != want {
			t.Errorf("follower %d has news %b, want %b", i, news, want)
		}
	}

	w = &fsnotify.Watcher{Events: make(chan fsnotify.Event), Errors: make(chan error)}
	done = make(chan struct{})
	go func() { h.dispatch(w); close(done) }()
	w.Errors <- fsnotify.ErrEventOverflow
	close(w.Errors)
	<-done
	for i, in := range ins {
		if len(in.wake) != 1 || in.take() != newsLook {
			t.Errorf("follower %d not told to look after an overflow", i)
		}
	}
}

func TestHubCheck(t *testing.T) {
	setCheckEvery(t, time.Hour)
	var h Hub
	dir := t.TempDir()
	// file makes a file in dir and returns its path and identity.
	file := func(name, content string) (string, os.FileInfo) {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o640); err != nil {
			t.Fatal(err)
		}
		st, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		return path, st
	}
	full, fst := file("0.log", "12345")
	empty, est := file("1.log", "")
	_, old := file("0.log.1", "")
	up := true
	for _, tc := range []struct {
		name     string
		path     string
		seen     *sight
		stopped  bool
		wake     bool
		wantNews uint32
	}{
		{"not asleep yet", full, nil, false, false, 0},
		{"has it all", full, &sight{cur: fst, off: 5}, false, false, 0},
		{"a write no event told of", full, &sight{cur: fst, off: 3}, false, true, 0},
		{"a rotation no event told of", full, &sight{cur: old}, false, true, newsLook},
		{"the new file still empty", empty, &sight{cur: old, next: est}, false, false, 0},
		{"the new file written", full, &sight{cur: old, next: fst}, false, true, 0},
		{"gone", filepath.Join(dir, "2.log"), &sight{cur: old}, false, false, 0},
		{"stopped", full, &sight{cur: fst, off: 5}, true, true, newsStopped},
	} {
		t.Run(tc.name, func(t *testing.T) {
			up = !tc.stopped
			// A check that does not look sees a stopped container only.
			in := newInterest(tc.path, func() bool { return up })
			in.rest(tc.seen)
			h.checkAll([]*interest{in}, false)
			if woken := len(in.wake) == 1; woken != tc.stopped {
				t.Errorf("without a look: woken = %v, want %v", woken, tc.stopped)
			}
			if news, want := in.take(), tc.wantNews&newsStopped; news != want {
				t.Errorf("without a look: news = %b, want %b", news, want)
			}

			in = newInterest(tc.path, func() bool { return up })
			in.rest(tc.seen)
			h.checkAll([]*interest{in}, true)
			if woken := len(in.wake) == 1; woken != tc.wake {
				t.Errorf("woken = %v, want %v", woken, tc.wake)
			}
			if news := in.take(); news != tc.wantNews {
				t.Errorf("news = %b, want %b", news, tc.wantNews)
			}
		})
	}
}

func TestHubRewatchesRecreatedDir(t *testing.T) {
	setCheckEvery(t, time.Hour)
	var h Hub
	dir := filepath.Join(t.TempDir(), "pod")
	path := filepath.Join(dir, "0.log")
	mk := func() {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(cri(0, "stdout", "F", "hello")), 0o640); err != nil {
			t.Fatal(err)
		}
	}
	start := func() (*syncWriter, func()) {
		ctx, cancel := context.WithCancel(context.Background())
		w, done := newSyncWriter(), make(chan error, 1)
		go func() { done <- h.Read(ctx, filepath.Dir(dir), path, Options{Follow: true}, w, nil) }()
		return w, func() { cancel(); <-done }
	}
	mk()
	w1, stop1 := start()
	defer stop1()
	w1.waitFor(t, "hello\n")
	// The pod's directory goes. (Its watch stays while the follower
	// holds the file open in it.)
	wakes := h.wakes.Load()
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	// Its events are handed out before it comes back, so that none of
	// them wakes a follower of the new one.
	for deadline := time.Now().Add(5 * time.Second); h.wakes.Load() == wakes; {
		if time.Now().After(deadline) {
			t.Fatal("the follower was not told of the removal")
		}
		time.Sleep(time.Millisecond)
	}
	// It comes back: the next follower watches it again, and the one
	// still there moves on to the new file.
	mk()
	w2, stop2 := start()
	defer stop2()
	w2.waitFor(t, "hello\n")
	appendLog(t, path, cri(1, "stdout", "F", "again"))
	w2.waitFor(t, "hello\nagain\n")
	w1.waitFor(t, "hello\nhello\nagain\n")
}
