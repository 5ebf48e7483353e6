package cgroupfs

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/containerd/cgroups/v3"
	"golang.org/x/sys/unix"
)

func TestNewReaderHost(t *testing.T) {
	r := newHostReader(t)
	if r.Unified() {
		t.Fatalf("NewReader on a %v host reads cgroup2: %v", cgroups.Mode(), r)
	}
	f := func(h statsMount, controller, file string) {
		t.Helper()
		var st unix.Statfs_t
		if err := unix.Statfs(h.mount, &st); err != nil || st.Type != unix.CGROUP_SUPER_MAGIC {
			t.Errorf("%s mount %q is not a cgroup v1 mount: %v", controller, h.mount, err)
		}
		if _, err := os.Stat(filepath.Join(h.mount, file)); err != nil {
			t.Errorf("%s mount %q: %v", controller, h.mount, err)
		}
		if h.root != "/" {
			t.Errorf("%s mount root = %q", controller, h.root)
		}
	}
	f(r.cpu, "cpuacct", "cpuacct.usage")
	f(r.memory, "memory", "memory.stat")
	f(r.pids, "pids", "cgroup.procs")
	t.Log(r)
}

func TestReadHost(t *testing.T) {
	r := newHostReader(t)
	cg := makeHostCgroup(t, r.cpu.mount, r.memory.mount, r.pids.mount)
	cmd := cg.startIn(t, "work")
	s, err := r.Read(cg.rel)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: %+v", cg.rel, s)
	if !s.HasCPU || !s.HasMemory || !s.HasPids {
		t.Fatalf("not every controller read: %+v", s)
	}
	if s.CPUUsageNanos < uint64(250*time.Millisecond) {
		t.Errorf("CPU usage %v, want at least 250ms", time.Duration(s.CPUUsageNanos))
	}
	if s.MemoryWorkingSet < 50<<20 || s.MemoryRSS < 50<<20 || s.MemoryUsage < s.MemoryWorkingSet {
		t.Errorf("memory usage %d, working set %d, rss %d: want a working set and rss of at least 50 MiB",
			s.MemoryUsage, s.MemoryWorkingSet, s.MemoryRSS)
	}
	if s.PageFaults < 50<<20/(2<<20) {
		t.Errorf("%d page faults, want at least one per touched (huge) page", s.PageFaults)
	}
	if s.MemoryLimit != 0 {
		t.Errorf("memory limit %d, want 0 (unlimited)", s.MemoryLimit)
	}
	if s.Pids < 1 {
		t.Errorf("pids %d", s.Pids)
	}
	// The parent counts its child hierarchically (total_* counters).
	ps, err := r.Read("/" + statsTestParent)
	if err != nil {
		t.Fatal(err)
	}
	if ps.MemoryWorkingSet < 50<<20 || ps.CPUUsageNanos < s.CPUUsageNanos || ps.Pids < s.Pids {
		t.Errorf("parent %+v does not include its child %+v", ps, s)
	}
	// A limit reads back.
	limit := filepath.Join(r.memory.mount, cg.rel, "memory.limit_in_bytes")
	if err := os.WriteFile(limit, []byte("1073741824"), 0); err != nil {
		t.Fatal(err)
	}
	if s, err := r.Read(cg.rel); err != nil || s.MemoryLimit != 1<<30 {
		t.Errorf("after setting a 1 GiB limit: %+v, %v", s, err)
	}

	cmd.Process.Kill()
	cmd.Wait()
	for _, dir := range cg.dirs {
		for deadline := time.Now().Add(5 * time.Second); os.Remove(dir) != nil && time.Now().Before(deadline); {
			time.Sleep(10 * time.Millisecond)
		}
	}
	if _, err := r.Read(cg.rel); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Read of a removed cgroup: %v, want fs.ErrNotExist", err)
	}
}

// The cgroup2 mount of a hybrid host has no controllers, but every cgroup
// there still has cpu.stat: the v2 reader sees CPU and nothing else.
func TestReadHostCgroup2WithoutControllers(t *testing.T) {
	newHostReader(t)
	mountinfo, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	unified := parseStatsMounts(mountinfo).cgroup2.mount
	if unified == "" {
		t.Skip("no cgroup2 mount")
	}
	controllers, err := os.ReadFile(filepath.Join(unified, "cgroup.subtree_control"))
	if err != nil {
		t.Fatal(err)
	}
	cg := makeHostCgroup(t, unified)
	cg.startIn(t, "work")
	s, err := NewReaderAt(true, unified).Read(cg.rel)
	if err != nil {
		t.Fatal(err)
	}
	if !s.HasCPU || s.CPUUsageNanos < uint64(250*time.Millisecond) {
		t.Errorf("cgroup2 CPU: %+v", s)
	}
	enabled := strings.Fields(string(controllers))
	for _, c := range []struct {
		name string
		has  bool
	}{{"memory", s.HasMemory}, {"pids", s.HasPids}} {
		if want := slices.Contains(enabled, c.name); c.has != want {
			t.Errorf("Has %s = %v with subtree_control %q", c.name, c.has, controllers)
		}
	}
}

// RateTracker over a real cgroup with one busy thread: at most a core,
// agreeing with the kernel's per-process accounting of the same window.
func TestRateTrackerHost(t *testing.T) {
	r := newHostReader(t)
	cg := makeHostCgroup(t, r.cpu.mount)
	cmd := cg.startIn(t, "burn")
	var rt RateTracker
	s0, err := r.Read(cg.rel)
	if err != nil {
		t.Fatal(err)
	}
	ticks0 := procTicks(t, cmd.Process.Pid)
	if _, ok := rt.NanoCores(cg.rel, s0.CPUUsageNanos, s0.Time); ok {
		t.Fatal("first sample gave a rate")
	}
	time.Sleep(300 * time.Millisecond)
	s1, err := r.Read(cg.rel)
	if err != nil {
		t.Fatal(err)
	}
	ticks1 := procTicks(t, cmd.Process.Pid)
	got, ok := rt.NanoCores(cg.rel, s1.CPUUsageNanos, s1.Time)
	if !ok {
		t.Fatal("no rate from the second sample")
	}
	window := s1.Time.Sub(s0.Time)
	fromProc := float64(ticks1-ticks0) * 1e7 / window.Seconds() // USER_HZ is 100
	t.Logf("%d nanocores over %v; /proc/<pid>/stat says %.0f", got, window, fromProc)
	// How much of a core the thread got depends on what else the machine
	// runs; that it got some, and never more than one core, does not.
	if got == 0 || got > 1.1e9 {
		t.Errorf("one busy thread: %d nanocores, want more than 0 and at most a core", got)
	}
	// /proc counts 10 ms ticks: allow two at each end, plus 5%.
	tolerance := 0.05*fromProc + 4*1e7/window.Seconds()
	if diff := float64(got) - fromProc; diff > tolerance || -diff > tolerance {
		t.Errorf("rate %d disagrees with the process's own CPU time (%.0f nanocores)", got, fromProc)
	}
}

// Read of one real v1 cgroup holding a process with 50 MiB: what a scrape
// pays per container on this kernel.
func BenchmarkReadHost(b *testing.B) {
	if os.Geteuid() != 0 || cgroups.Mode() == cgroups.Unified {
		b.Skip("needs root and cgroup v1 hierarchies")
	}
	r, err := NewReader()
	if err != nil {
		b.Fatal(err)
	}
	cg := makeHostCgroup(b, r.cpu.mount, r.memory.mount, r.pids.mount)
	cg.startIn(b, "work")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := r.Read(cg.rel); err != nil {
			b.Fatal(err)
		}
	}
}
