package cgroupfs

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/containerd/cgroups/v3"
)

const (
	fixturePod = "/kubepods/burstable/pod6f1c2a4e-0000-4000-8000-000000000001"
	fixtureCtr = fixturePod + "/4b0e5cbbd7c0a1f3"
)

// sameStats compares all but Time, which must be set.
func sameStats(t *testing.T, what string, got, want Stats) {
	t.Helper()
	if got.Time.IsZero() || time.Since(got.Time) > time.Minute {
		t.Errorf("%s: Time = %v, want about now", what, got.Time)
	}
	got.Time = time.Time{}
	if got != want {
		t.Errorf("%s:\n got %+v\nwant %+v", what, got, want)
	}
}

func TestReadFixtures(t *testing.T) {
	f := func(unified bool, root, path string, want Stats) {
		t.Helper()
		got, err := NewReaderAt(unified, root).Read(path)
		if err != nil {
			t.Errorf("Read(%s) in %s: %v", path, root, err)
			return
		}
		sameStats(t, root+path, got, want)
	}
	all := func(s Stats) Stats { s.HasCPU, s.HasMemory, s.HasPids = true, true, true; return s }

	// The same pod and container, as v1 and as v2 would show them.
	pod := all(Stats{
		CPUUsageNanos: 2345678901, MemoryUsage: 62914560, MemoryWorkingSet: 62914560 - 8388608,
		MemoryRSS: 52428800, MemoryCache: 12582912, PageFaults: 16000, MajorPageFaults: 12, Pids: 3,
	})
	ctr := all(Stats{
		CPUUsageNanos: 2000000000, MemoryUsage: 57671680, MemoryWorkingSet: 57671680 - 10485760,
		MemoryRSS: 48234496, MemoryCache: 8388608, PageFaults: 15000, MajorPageFaults: 3,
		MemoryLimit: 134217728, Pids: 2,
	})
	f(false, "testdata/stats/v1", fixturePod, pod)
	f(false, "testdata/stats/v1", fixtureCtr, ctr)
	pod.CPUUsageNanos = 2345678000 // cpu.stat counts microseconds
	f(true, "testdata/stats/v2", fixturePod, pod)
	f(true, "testdata/stats/v2", fixtureCtr, ctr)
	// A trailing slash or a path without the leading one read the same.
	f(true, "testdata/stats/v2", strings.TrimPrefix(fixtureCtr, "/")+"/", ctr)

	// Inactive file cache above usage: the working set stops at zero.
	f(false, "testdata/stats/v1", "/clamp", all(Stats{
		CPUUsageNanos: 5, MemoryUsage: 1 << 20, MemoryCache: 2 << 20, PageFaults: 7,
	}))
	// A cgroup missing from the pids hierarchy, and no pids hierarchy at all.
	f(false, "testdata/stats/v1", "/nopids", Stats{
		CPUUsageNanos: 1000, MemoryUsage: 4096, MemoryWorkingSet: 4096, MemoryRSS: 4096, PageFaults: 1,
		HasCPU: true, HasMemory: true,
	})
	f(false, "testdata/stats/v1-nopids", "/kubepods/podX", Stats{
		CPUUsageNanos: 777, MemoryUsage: 8192, MemoryWorkingSet: 4096, MemoryRSS: 4096, MemoryCache: 4096,
		PageFaults: 10, MajorPageFaults: 1, HasCPU: true, HasMemory: true,
	})
	// v2 with memory and pids not enabled for the subtree.
	f(true, "testdata/stats/v2", "/nocontrollers", Stats{CPUUsageNanos: 42000, HasCPU: true})
}

func TestReadFixtureErrors(t *testing.T) {
	f := func(unified bool, root, path string, class error, file string) {
		t.Helper()
		s, err := NewReaderAt(unified, root).Read(path)
		if !errors.Is(err, class) {
			t.Errorf("Read(%s) in %s = %+v, %v; want an error wrapping %v", path, root, s, err, class)
			return
		}
		if !strings.Contains(err.Error(), file) {
			t.Errorf("Read(%s) in %s: error %q does not name %s", path, root, err, file)
		}
	}
	f(false, "testdata/stats/v1", "/garbled", ErrBadStatsFile, "testdata/stats/v1/memory/garbled/memory.stat")
	f(false, "testdata/stats/v1", "/nototal", ErrBadStatsFile, "testdata/stats/v1/memory/nototal/memory.stat")
	f(false, "testdata/stats/v1", "/badcpu", ErrBadStatsFile, "testdata/stats/v1/cpuacct/badcpu/cpuacct.usage")
	f(true, "testdata/stats/v2", "/badmax", ErrBadStatsFile, "testdata/stats/v2/badmax/memory.max")
	f(true, "testdata/stats/v2", "/badstat", ErrBadStatsFile, "testdata/stats/v2/badstat/memory.stat")
	f(true, "testdata/stats/v2", "/nousage", ErrBadStatsFile, "testdata/stats/v2/nousage/cpu.stat")

	f(false, "testdata/stats/v1", "/kubepods/gone", fs.ErrNotExist, "/kubepods/gone")
	f(true, "testdata/stats/v2", "/kubepods/gone", fs.ErrNotExist, "/kubepods/gone")
	f(false, "testdata/no-such-root", fixturePod, fs.ErrNotExist, fixturePod)
}

// A controller file that vanishes after the first one was read (the
// cgroup being removed mid-read) leaves the whole group unread, not half
// filled.
func TestReadRemovedMidway(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "memory", "c")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "memory.usage_in_bytes"), []byte("4096\n"), 0o644)
	cpu := filepath.Join(root, "cpuacct", "c")
	os.MkdirAll(cpu, 0o755)
	os.WriteFile(filepath.Join(cpu, "cpuacct.usage"), []byte("9\n"), 0o644)
	s, err := NewReaderAt(false, root).Read("/c")
	if err != nil || !s.HasCPU || s.CPUUsageNanos != 9 || s.HasMemory || s.MemoryUsage != 0 {
		t.Fatalf("Read with memory.limit_in_bytes missing = %+v, %v", s, err)
	}
}

// A file longer than the pooled buffer is read whole.
func TestReadLongMemoryStat(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "c")
	os.MkdirAll(dir, 0o755)
	var sb strings.Builder
	for sb.Len() < 3*statsDataSize {
		sb.WriteString("some_future_counter 123456789\n")
	}
	sb.WriteString("anon 1\nfile 2\ninactive_file 3\npgfault 4\npgmajfault 5\n")
	os.WriteFile(filepath.Join(dir, "memory.stat"), []byte(sb.String()), 0o644)
	os.WriteFile(filepath.Join(dir, "memory.current"), []byte("10\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "memory.max"), []byte("1000\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "cpu.stat"), []byte("usage_usec 7\n"), 0o644)
	got, err := NewReaderAt(true, root).Read("/c")
	if err != nil {
		t.Fatal(err)
	}
	sameStats(t, "long memory.stat", got, Stats{
		CPUUsageNanos: 7000, MemoryUsage: 10, MemoryWorkingSet: 7, MemoryRSS: 1, MemoryCache: 2,
		PageFaults: 4, MajorPageFaults: 5, MemoryLimit: 1000, HasCPU: true, HasMemory: true,
	})
}

func TestParseUintBytes(t *testing.T) {
	f := func(in string, want uint64, wantOK bool) {
		t.Helper()
		got, ok := parseUintLine([]byte(in))
		if got != want || ok != wantOK {
			t.Errorf("parseUintLine(%q) = %d, %v; want %d, %v", in, got, ok, want, wantOK)
		}
	}
	f("0\n", 0, true)
	f("18446744073709551615\n", 1<<64-1, true)
	f("18446744073709551616\n", 0, false)
	f("99999999999999999999\n", 0, false)
	f("", 0, false)
	f("\n", 0, false)
	f("12 34\n", 0, false)
	f("-1\n", 0, false)
	f("max\n", 0, false)
}

func TestEachKeyed(t *testing.T) {
	f := func(in string, wantOK bool, want ...string) {
		t.Helper()
		var got []string
		ok := eachKeyed([]byte(in), func(k []byte, v uint64) bool {
			got = append(got, string(k)+"="+strconv.FormatUint(v, 10))
			return true
		})
		if ok != wantOK || strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("eachKeyed(%q) = %v %v; want %v %v", in, got, ok, want, wantOK)
		}
	}
	f("a 1\nb 2\n", true, "a=1", "b=2")
	f("a 1\n\nb 2", true, "a=1", "b=2") // blank line, no final newline
	f("", true)
	f("a 1\nb\n", false, "a=1")
	f("a 1\n 2\n", false, "a=1")
	f("a 1\nb x\n", false, "a=1")
	f("a 1\nb 2 3\n", false, "a=1")
}

func TestReaderFromMountinfo(t *testing.T) {
	f := func(mode cgroups.CGMode, file string, want *Reader) {
		t.Helper()
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		got, err := readerFromMountinfo(mode, data)
		if want == nil {
			if err == nil {
				t.Errorf("%s: want an error, got %v", file, got)
			}
			return
		}
		if err != nil || *got != *want {
			t.Errorf("%s:\n got %+v, %v\nwant %+v", file, got, err, want)
		}
	}
	h := func(mount string) statsMount { return statsMount{mount: mount, root: "/"} }
	f(cgroups.Hybrid, "testdata/mountinfo-hybrid", &Reader{
		cpu: h("/sys/fs/cgroup/cpuacct"), memory: h("/sys/fs/cgroup/memory"), pids: h("/sys/fs/cgroup/pids"),
	})
	// cpu,cpuacct together; memory mounted twice, a subtree first; no pids.
	f(cgroups.Hybrid, "testdata/stats/mountinfo-comounted", &Reader{
		cpu: h("/sys/fs/cgroup/cpu,cpuacct"), memory: h("/sys/fs/cgroup/memory"),
	})
	f(cgroups.Legacy, "testdata/stats/mountinfo-comounted", &Reader{
		cpu: h("/sys/fs/cgroup/cpu,cpuacct"), memory: h("/sys/fs/cgroup/memory"),
	})
	f(cgroups.Unified, "testdata/stats/mountinfo-unified", &Reader{
		unified: true, cpu: h("/sys/fs/cgroup"), memory: h("/sys/fs/cgroup"), pids: h("/sys/fs/cgroup"),
	})
	// Inside a cgroup namespace only the pod's subtree is mounted.
	sub := func(mount string) statsMount { return statsMount{mount: mount, root: "/kubepods/pod1"} }
	f(cgroups.Hybrid, "testdata/stats/mountinfo-namespaced", &Reader{
		cpu: sub("/sys/fs/cgroup/cpu and acct"), memory: sub("/sys/fs/cgroup/memory"), pids: sub("/sys/fs/cgroup/pids"),
	})
	f(cgroups.Unified, "testdata/stats/mountinfo-namespaced", &Reader{
		unified: true, cpu: sub("/sys/fs/cgroup"), memory: sub("/sys/fs/cgroup"), pids: sub("/sys/fs/cgroup"),
	})
	f(cgroups.Unified, "testdata/mountinfo-hybrid", &Reader{
		unified: true, cpu: h("/sys/fs/cgroup/unified"), memory: h("/sys/fs/cgroup/unified"), pids: h("/sys/fs/cgroup/unified"),
	})
	f(cgroups.Unavailable, "testdata/mountinfo-hybrid", nil)
	f(cgroups.Hybrid, "testdata/stats/mountinfo-unified", nil)
	f(cgroups.Unified, "testdata/stats/mountinfo-comounted", &Reader{
		unified: true, cpu: h("/sys/fs/cgroup/unified"), memory: h("/sys/fs/cgroup/unified"), pids: h("/sys/fs/cgroup/unified"),
	})
}

// Paths outside a namespaced mount's subtree do not exist there; paths
// inside read relative to the mount.
func TestReadNamespacedSubtree(t *testing.T) {
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, "ctr"), 0o755)
	os.WriteFile(filepath.Join(root, "ctr", "cpu.stat"), []byte("usage_usec 5\n"), 0o644)
	h := statsMount{mount: root, root: "/kubepods/pod1"}
	r := &Reader{unified: true, cpu: h, memory: h, pids: h}
	s, err := r.Read("/kubepods/pod1/ctr")
	if err != nil || s.CPUUsageNanos != 5000 || !s.HasCPU || s.HasMemory {
		t.Fatalf("Read inside the subtree = %+v, %v", s, err)
	}
	for _, p := range []string{"/kubepods/pod2/ctr", "/kubepods/pod10/ctr"} {
		if _, err := r.Read(p); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("Read(%s) outside the subtree: %v, want fs.ErrNotExist", p, err)
		}
	}
}

func TestUnescapeMountinfo(t *testing.T) {
	f := func(in, want string) {
		t.Helper()
		if got := unescapeMountinfo(in); got != want {
			t.Errorf("unescapeMountinfo(%q) = %q, want %q", in, got, want)
		}
	}
	f("/sys/fs/cgroup", "/sys/fs/cgroup")
	f(`/a\040b`, "/a b")
	f(`/a\011b\012c\134d`, "/a\tb\nc\\d")
	f(`/a\04`, `/a\04`)
	f(`/a\09x`, `/a\09x`)
}
