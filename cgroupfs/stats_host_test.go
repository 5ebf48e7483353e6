package cgroupfs

import (
	"bufio"
	"errors"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/containerd/cgroups/v3"
	"golang.org/x/sys/unix"
)

// statsTestParent is the only cgroup the stats tests create children in,
// in each hierarchy they use.
const statsTestParent = "podline-stats-test"

// statsHelperEnv selects the child's work in TestStatsHelperProcess.
const statsHelperEnv = "PODLINE_STATS_HELPER"

// TestStatsHelperProcess is not a test: it is the child process the host
// tests put in a cgroup, run as this test binary. It waits for a byte on
// stdin (by then it is in the cgroup), works, says "ready", then waits for
// stdin to close.
func TestStatsHelperProcess(t *testing.T) {
	work := os.Getenv(statsHelperEnv)
	if work == "" {
		return
	}
	in := bufio.NewReader(os.Stdin)
	in.ReadByte()
	switch work {
	case "work":
		// 300 ms of CPU, counted from the move into the cgroup.
		start := processCPU()
		for processCPU()-start < 300*time.Millisecond {
			for range 100000 {
			}
		}
		mem := make([]byte, 50<<20)
		for i := 0; i < len(mem); i += 4096 {
			mem[i] = 1
		}
		os.Stdout.WriteString("ready\n")
		io.Copy(io.Discard, in)
		runtime.KeepAlive(mem)
	case "burn":
		os.Stdout.WriteString("ready\n")
		for {
		}
	}
	os.Exit(0)
}

func processCPU() time.Duration {
	var ts unix.Timespec
	unix.ClockGettime(unix.CLOCK_PROCESS_CPUTIME_ID, &ts)
	return time.Duration(ts.Nano())
}

// hostCgroup is a cgroup this test made in some hierarchies.
type hostCgroup struct {
	rel  string   // relative to the hierarchy roots
	dirs []string // its directory in each hierarchy
}

// makeHostCgroup makes statsTestParent/<random> in each mount; cleanup
// removes it (and the parent, once no other test uses it).
func makeHostCgroup(t testing.TB, mounts ...string) hostCgroup {
	t.Helper()
	cg := hostCgroup{rel: "/" + statsTestParent + "/" + strconv.FormatUint(rand.Uint64(), 36)}
	t.Cleanup(func() {
		for _, dir := range cg.dirs {
			// A v1 cgroup of exited tasks may take a moment to let go.
			var err error
			for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
				err = os.Remove(dir)
				if err == nil || errors.Is(err, fs.ErrNotExist) || time.Now().After(deadline) {
					break
				}
			}
			if err != nil && !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("remove test cgroup: %v", err)
			}
			os.Remove(filepath.Dir(dir)) // fails while other tests use it
		}
	})
	for _, mnt := range mounts {
		dir := filepath.Join(mnt, cg.rel)
		if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		cg.dirs = append(cg.dirs, dir)
	}
	return cg
}

// startIn runs the helper doing work in cg and waits until it is ready.
// Cleanup (registered after the cgroup's, so it runs first) ends it.
func (cg hostCgroup) startIn(t *testing.T, work string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestStatsHelperProcess$")
	cmd.Env = append(os.Environ(), statsHelperEnv+"="+work)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	pid := strconv.Itoa(cmd.Process.Pid)
	for _, dir := range cg.dirs {
		if err := os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(pid), 0); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := stdin.Write([]byte{'g'}); err != nil {
		t.Fatal(err)
	}
	ready := make(chan error, 1)
	go func() {
		line, err := bufio.NewReader(stdout).ReadString('\n')
		if err == nil && line != "ready\n" {
			err = errors.New("helper said " + strconv.Quote(line))
		}
		ready <- err
	}()
	select {
	case err := <-ready:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("helper not ready after 20 s")
	}
	return cmd
}

func newHostReader(t *testing.T) *Reader {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Fatal("cgroup stats host tests need root")
	}
	if cgroups.Mode() == cgroups.Unified {
		t.Skip("cgroup v1 hierarchies not mounted on this unified host")
	}
	r, err := NewReader()
	if err != nil {
		t.Fatal(err)
	}
	return r
}

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

// RateTracker over a real cgroup with one busy thread: about a core,
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
	if got < 0.5e9 || got > 1.1e9 {
		t.Errorf("one busy thread: %d nanocores, want about 1e9", got)
	}
	// /proc counts 10 ms ticks: allow two at each end, plus 5%.
	tolerance := 0.05*fromProc + 4*1e7/window.Seconds()
	if diff := float64(got) - fromProc; diff > tolerance || -diff > tolerance {
		t.Errorf("rate %d disagrees with the process's own CPU time (%.0f nanocores)", got, fromProc)
	}
}

// procTicks is utime+stime of a process, in USER_HZ ticks.
func procTicks(t *testing.T, pid int) uint64 {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		t.Fatal(err)
	}
	// Fields after the parenthesised command: state is field 3, utime 14.
	rest := string(b[strings.LastIndexByte(string(b), ')')+2:])
	f := strings.Fields(rest)
	utime, err1 := strconv.ParseUint(f[11], 10, 64)
	stime, err2 := strconv.ParseUint(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		t.Fatalf("parse %s: %v %v", b, err1, err2)
	}
	return utime + stime
}
