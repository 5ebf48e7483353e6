package cgroupfs

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// limitMemory caps the test cgroup at 32 MiB.
func limitMemory(t *testing.T, cg testCgroup) {
	t.Helper()
	limit := strconv.Itoa(32 << 20)
	switch {
	case cg.mem != "":
		if err := os.WriteFile(filepath.Join(cg.mem, "memory.limit_in_bytes"), []byte(limit), 0); err != nil {
			t.Fatal(err)
		}
	default:
		file := filepath.Join(cg.v2, "memory.max")
		if _, err := os.Stat(file); err != nil {
			t.Skipf("kernel feature missing: no v1 memory hierarchy and no cgroup2 memory controller in %s", filepath.Dir(cg.v2))
		}
		if err := os.WriteFile(file, []byte(limit), 0); err != nil {
			t.Fatal(err)
		}
	}
}

// allocate100M makes dd hold a 100 MiB buffer, filled from /dev/zero.
const allocate100M = "exec dd if=/dev/zero of=/dev/null bs=100M count=1 2>/dev/null"

func TestNotifyOOMKill(t *testing.T) {
	n := newTestNotifier(t)
	r := runNotifier(t, n)
	cg := makeTestCgroup(t, n)
	limitMemory(t, cg)
	cmd, stdin := cg.start(t, "sh", "-c", "read x; "+allocate100M)
	id, err := n.Watch(cg.rel)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	stdin.WriteString("go\n")
	oom := r.expect(t, OOMKill, id, 5*time.Second)
	if oom.OOMKills != 1 {
		t.Errorf("OOMKills = %d, want 1", oom.OOMKills)
	}
	emptied := r.expect(t, Emptied, id, 5*time.Second)
	t.Logf("start → OOMKill seen after %v; OOMKill → Emptied %v", oom.Time.Sub(start), emptied.Time.Sub(oom.Time))
	cmd.Wait()
	if got := cmd.ProcessState.String(); got != "signal: killed" {
		t.Errorf("allocating process ended with %q, want killed", got)
	}
	n.mu.Lock()
	kills, err := n.readKills(n.byID[id])
	n.mu.Unlock()
	if err != nil || kills != oom.OOMKills {
		t.Errorf("oom_kill counter = %d, %v; notification said %d", kills, err, oom.OOMKills)
	}
	r.expectNone(t, 100*time.Millisecond)
}

// TestNotifyOOMKillOfChild: the kill of one process of a cgroup that stays
// populated is reported from the OOM notification alone.
func TestNotifyOOMKillOfChild(t *testing.T) {
	n := newTestNotifier(t)
	r := runNotifier(t, n)
	cg := makeTestCgroup(t, n)
	limitMemory(t, cg)
	cmd, stdin := cg.start(t, "sh", "-c", "read x; dd if=/dev/zero of=/dev/null bs=100M count=1 2>/dev/null; read y; exit 0")
	id, err := n.Watch(cg.rel)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	stdin.WriteString("go\n")
	oom := r.expect(t, OOMKill, id, 5*time.Second)
	t.Logf("start → OOMKill seen after %v", oom.Time.Sub(start))
	r.expectNone(t, 100*time.Millisecond) // sh lives on
	stdin.Close()
	r.expect(t, Emptied, id, 5*time.Second)
	cmd.Wait()
	if !cmd.ProcessState.Success() {
		t.Errorf("shell ended with %v", cmd.ProcessState)
	}
}

// TestNotifyOOMBeforeWatch: a kill that happened before podline watched
// the cgroup is reported at Watch, before the Emptied it caused.
func TestNotifyOOMBeforeWatch(t *testing.T) {
	n := newTestNotifier(t)
	cg := makeTestCgroup(t, n)
	limitMemory(t, cg)
	cmd, stdin := cg.start(t, "sh", "-c", "read x; "+allocate100M)
	stdin.WriteString("go\n")
	cmd.Wait()
	id, err := n.Watch(cg.rel)
	if err != nil {
		t.Fatal(err)
	}
	r := runNotifier(t, n)
	if oom := r.expect(t, OOMKill, id, time.Second); oom.OOMKills != 1 {
		t.Errorf("OOMKills = %d, want 1", oom.OOMKills)
	}
	r.expect(t, Emptied, id, time.Second)
}

func TestNotifyUnwatchReleases(t *testing.T) {
	n := newTestNotifier(t)
	r := runNotifier(t, n)
	const k = 20
	var cgs []testCgroup
	var cmds []*os.File
	for range k {
		cg := makeTestCgroup(t, n)
		_, stdin := cg.start(t, "sh", "-c", "read x")
		cgs, cmds = append(cgs, cg), append(cmds, stdin)
	}
	fds, watches := openFDs(t), inotifyWatches(t)
	var ids []uint64
	for _, cg := range cgs {
		id, err := n.Watch(cg.rel)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	perCgroupFDs := 0
	if n.memoryV1 != "" {
		perCgroupFDs = 1 // the OOM eventfd
	}
	if got := openFDs(t) - fds; got != k*perCgroupFDs {
		t.Errorf("watching %d cgroups opened %d fds, want %d", k, got, k*perCgroupFDs)
	}
	if got := inotifyWatches(t) - watches; got < k {
		t.Errorf("watching %d cgroups added %d inotify watches", k, got)
	}
	for _, id := range ids {
		n.Unwatch(id)
		n.Unwatch(id) // twice is harmless
	}
	if got := openFDs(t); got != fds {
		t.Errorf("after Unwatch: %d fds, want %d", got, fds)
	}
	if got := inotifyWatches(t); got != watches {
		t.Errorf("after Unwatch: %d inotify watches, want %d", got, watches)
	}
	for _, stdin := range cmds {
		stdin.WriteString("go\n")
	}
	r.expectNone(t, 200*time.Millisecond)
}

// TestNotifyRemovedNoFalseOOM: removing a v1 memory cgroup fires its OOM
// eventfd; that must not read as a kill, and the eventfd is released.
func TestNotifyRemovedNoFalseOOM(t *testing.T) {
	n := newTestNotifier(t)
	r := runNotifier(t, n)
	cg := makeTestCgroup(t, n)
	id, err := n.Watch(cg.rel)
	if err != nil {
		t.Fatal(err)
	}
	r.expect(t, Emptied, id, time.Second)
	fds, watches := openFDs(t), inotifyWatches(t)
	cg.remove(t)
	r.expectNone(t, 300*time.Millisecond)
	if got := openFDs(t); n.memoryV1 != "" && got != fds-1 {
		t.Errorf("after removing the memory cgroup: %d fds, want %d (eventfd released)", got, fds-1)
	}
	n.Unwatch(id)
	if got := inotifyWatches(t); got >= watches {
		t.Errorf("after Unwatch of a removed cgroup: %d inotify watches, had %d", got, watches)
	}
}
