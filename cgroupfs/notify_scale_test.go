package cgroupfs

import (
	"testing"
	"time"
)

// watchEmpty creates and watches k empty cgroups, checking that each
// delivers exactly one Emptied.
func watchEmpty(t *testing.T, n *Notifier, r received, k int) []uint64 {
	t.Helper()
	var cgs []testCgroup
	for range k {
		cgs = append(cgs, makeTestCgroup(t, n))
	}
	ids := make(map[uint64]bool, k)
	var order []uint64
	start := time.Now()
	var slowest time.Duration
	for _, cg := range cgs {
		t0 := time.Now()
		id, err := n.Watch(cg.rel)
		if err != nil {
			t.Fatal(err)
		}
		slowest = max(slowest, time.Since(t0))
		ids[id] = false
		order = append(order, id)
	}
	t.Logf("Watch of %d cgroups: %v each on average, slowest %v", k, time.Since(start)/time.Duration(k), slowest)
	if len(ids) != k {
		t.Fatalf("%d distinct ids for %d cgroups", len(ids), k)
	}
	for range k {
		nt, ok := r.next(t, 5*time.Second)
		if !ok {
			t.Fatal("missing Emptied notifications")
		}
		seen, known := ids[nt.CgroupID]
		if nt.Kind != Emptied || !known || seen {
			t.Fatalf("unexpected %+v (known %v, seen before %v)", nt, known, seen)
		}
		ids[nt.CgroupID] = true
	}
	r.expectNone(t, 50*time.Millisecond)
	return order
}

// TestNotifyIdleCPU: with nothing happening, Run sleeps in the kernel.
func TestNotifyIdleCPU(t *testing.T) {
	n := newTestNotifier(t)
	r := runNotifier(t, n)
	watchEmpty(t, n, r, 200)
	time.Sleep(20 * time.Millisecond)
	before := cpuTime(t)
	time.Sleep(300 * time.Millisecond)
	used := cpuTime(t) - before
	t.Logf("CPU over 300 ms idle with 200 watched cgroups: %v", used)
	if used > 10*time.Millisecond {
		t.Errorf("idle notifier used %v of CPU in 300 ms", used)
	}
}

func TestNotifyScale(t *testing.T) {
	if testing.Short() {
		t.Skip("creates 2,000 cgroups")
	}
	const k = 2000
	n := newTestNotifier(t)
	r := runNotifier(t, n)
	fds, watches := openFDs(t), inotifyWatches(t)
	ids := watchEmpty(t, n, r, k)
	perCgroupFDs := 0
	if n.memoryV1 != "" {
		perCgroupFDs = 1
	}
	gotFDs, gotWatches := openFDs(t)-fds, inotifyWatches(t)-watches
	t.Logf("%d watched cgroups: %d fds, %d inotify watches", k, gotFDs, gotWatches)
	if gotFDs != k*perCgroupFDs {
		t.Errorf("fds opened: %d, want %d", gotFDs, k*perCgroupFDs)
	}
	if gotWatches != k {
		t.Errorf("inotify watches: %d, want %d", gotWatches, k)
	}
	start := time.Now()
	for _, id := range ids {
		n.Unwatch(id)
	}
	t.Logf("Unwatch: %v each", time.Since(start)/k)
	if got := openFDs(t); got != fds {
		t.Errorf("after Unwatch: %d fds, want %d", got, fds)
	}
}
