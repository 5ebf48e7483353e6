package cgroupfs

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestNotifyPollsPastWatchLimit: a cgroup whose watch the inotify limit
// refuses is still watched, by polling, and its exit is reported; once
// watches are free again the next poll moves it back to inotify.
func TestNotifyPollsPastWatchLimit(t *testing.T) {
	n := newTestNotifier(t)
	n.pollEvery = 20 * time.Millisecond
	var limited atomic.Bool
	limited.Store(true)
	n.addWatch = func(file string) error {
		if limited.Load() {
			// As fsnotify returns inotify_add_watch's error.
			return fmt.Errorf("%q: %w", file, unix.ENOSPC)
		}
		return n.fsw.Add(file)
	}
	refusedBefore, polledBefore := notifyWatchLimit.Get(), notifyPolledCgs.Get()
	r := runNotifier(t, n)

	polled := makeTestCgroup(t, n)
	cmd, _ := polled.start(t, "sh", "-c", "read x")
	id, err := n.Watch(polled.rel)
	if err != nil {
		t.Fatalf("Watch at the inotify limit: %v", err)
	}
	if got := notifyPolledCgs.Get() - polledBefore; got != 1 {
		t.Errorf("polled cgroups gauge grew by %v, want 1", got)
	}
	r.expectNone(t, 5*n.pollEvery)
	killed := time.Now()
	cmd.Process.Kill()
	r.expect(t, Emptied, id, 2*time.Second)
	t.Logf("exit of a polled cgroup reported after %v (poll period %v)", time.Since(killed), n.pollEvery)
	n.Unwatch(id)

	back := makeTestCgroup(t, n)
	cmd, _ = back.start(t, "sh", "-c", "read x")
	id, err = n.Watch(back.rel)
	if err != nil {
		t.Fatal(err)
	}
	limited.Store(false)
	deadline := time.Now().Add(2 * time.Second)
	for n.polling() {
		if time.Now().After(deadline) {
			t.Fatal("the cgroup was still polled after watches became free")
		}
		time.Sleep(n.pollEvery)
	}
	// No longer polled: only inotify can report this exit.
	cmd.Process.Kill()
	r.expect(t, Emptied, id, 2*time.Second)
	r.expectNone(t, 5*n.pollEvery)
	n.Unwatch(id)

	if got := notifyWatchLimit.Get() - refusedBefore; got < 2 {
		t.Errorf("refused watches counted %v, want at least 2", got)
	}
	if got := notifyPolledCgs.Get(); got != polledBefore {
		t.Errorf("polled cgroups gauge %v after both left, want %v", got, polledBefore)
	}
}

// TestNotifyPolledCgroupRemovedIsEmptied: the runtime removes an exited
// container's cgroup within milliseconds, well inside a poll period, so a
// poll mostly finds a polled cgroup gone rather than empty. Gone is
// emptied (a populated cgroup cannot be removed): the exit is reported,
// and the cgroup is polled no more.
func TestNotifyPolledCgroupRemovedIsEmptied(t *testing.T) {
	n := newTestNotifier(t)
	n.pollEvery = 20 * time.Millisecond
	n.addWatch = func(file string) error { return fmt.Errorf("%q: %w", file, unix.ENOSPC) }
	polledBefore := notifyPolledCgs.Get()

	cg := makeTestCgroup(t, n)
	cmd, _ := cg.start(t, "sh", "-c", "read x")
	id, err := n.Watch(cg.rel)
	if err != nil {
		t.Fatalf("Watch at the inotify limit: %v", err)
	}
	// Exit and removal both before the first poll: Run starts after them.
	cmd.Process.Kill()
	cmd.Wait()
	cg.remove(t)
	if _, err := Populated(cg.v2); err == nil {
		t.Fatal("the test cgroup is still there")
	}
	r := runNotifier(t, n)
	r.expect(t, Emptied, id, 2*time.Second)
	r.expectNone(t, 5*n.pollEvery)
	if got := notifyPolledCgs.Get(); got != polledBefore {
		t.Errorf("polled cgroups gauge %v with the cgroup gone, want %v", got, polledBefore)
	}
	n.Unwatch(id)
}
