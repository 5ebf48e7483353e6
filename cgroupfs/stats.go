package cgroupfs

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"time"
)

// Stats is one on-demand reading of a cgroup's resource counters, what the
// Summary API and /metrics/resource report for a pod or a container.
type Stats struct {
	// Time is when the CPU counter was read, the instant to rate it at.
	Time time.Time
	// CPUUsageNanos is the cumulative CPU time of the cgroup: v1
	// cpuacct.usage, v2 cpu.stat usage_usec.
	CPUUsageNanos uint64
	// MemoryUsage is v1 memory.usage_in_bytes, v2 memory.current.
	MemoryUsage uint64
	// MemoryWorkingSet is MemoryUsage less the inactive file cache (v1
	// total_inactive_file, v2 inactive_file), never negative: the number
	// eviction and kubectl top look at.
	MemoryWorkingSet uint64
	// MemoryRSS is anonymous memory: v1 total_rss, v2 anon.
	MemoryRSS uint64
	// MemoryCache is the page cache: v1 total_cache, v2 file.
	MemoryCache uint64
	// PageFaults and MajorPageFaults are cumulative: v1
	// total_pgfault/total_pgmajfault, v2 pgfault/pgmajfault.
	PageFaults, MajorPageFaults uint64
	// MemoryLimit is v1 memory.limit_in_bytes or v2 memory.max; 0 when
	// unlimited.
	MemoryLimit uint64
	// Pids is pids.current: processes and threads in the cgroup.
	Pids uint64

	// Which groups of fields were read. A controller that is not mounted
	// (or not enabled for this cgroup on v2) leaves its group unread,
	// which is not an error.
	HasCPU, HasMemory, HasPids bool
}

// ErrBadStatsFile means a cgroup stats file did not parse; the error names
// the file.
var ErrBadStatsFile = errors.New("malformed cgroup stats file")

// statsMount is where one controller's cgroups are visible.
type statsMount struct {
	// mount is the mount point; "" when the controller is not mounted.
	mount string
	// root is the mount's root within the hierarchy (the mountinfo root
	// field): "/" unless only a subtree is mounted, as inside a cgroup
	// namespace.
	root string
}

// dirOf returns the directory of the cgroup path in this hierarchy, or
// false when the cgroup lies outside the mounted subtree.
func (h statsMount) dirOf(path string) (mount, rel string, ok bool) {
	if h.root == "" || h.root == "/" {
		return h.mount, path, true
	}
	rest, found := strings.CutPrefix(path, h.root)
	if !found || (rest != "" && rest[0] != '/') {
		return "", "", false
	}
	return h.mount, rest, true
}

// Reader reads Stats of cgroups when asked, touching only the few files it
// needs, with no background polling: a node with thousands of pods costs
// nothing between scrapes. A Reader is safe for concurrent use.
//
// It never writes to a cgroup.
type Reader struct {
	unified bool
	// The hierarchies of cpuacct (v1; cpu.stat on v2), memory and pids.
	// On a unified host all three are the cgroup2 mount.
	cpu, memory, pids statsMount
}

// NewReaderAt returns a Reader of a fixture tree: with unified, a cgroup2
// layout (root/<path>/memory.current); otherwise a v1 layout with one
// directory per controller (root/memory/<path>/memory.stat,
// root/cpuacct/..., root/pids/...).
func NewReaderAt(unified bool, root string) *Reader {
	if unified {
		h := statsMount{mount: root, root: "/"}
		return &Reader{unified: true, cpu: h, memory: h, pids: h}
	}
	return &Reader{
		cpu:    statsMount{mount: root + "/cpuacct", root: "/"},
		memory: statsMount{mount: root + "/memory", root: "/"},
		pids:   statsMount{mount: root + "/pids", root: "/"},
	}
}

// Unified says whether the Reader reads cgroup v2 files.
func (r *Reader) Unified() bool { return r.unified }

// String names the hierarchies read, for logs.
func (r *Reader) String() string {
	if r.unified {
		return "cgroup2 " + r.cpu.mount
	}
	return fmt.Sprintf("cgroup v1 cpuacct=%q memory=%q pids=%q", r.cpu.mount, r.memory.mount, r.pids.mount)
}

// Read reads the stats of the cgroup at path, relative to the hierarchy
// roots ("/kubepods/burstable/pod<uid>/<container id>"). A cgroup that
// exists in none of the hierarchies is an error wrapping fs.ErrNotExist;
// one that exists in some only (being created or removed right now, or a
// controller without it) reads with the missing groups' Has* false.
// A file that does not parse is an error wrapping ErrBadStatsFile.
func (r *Reader) Read(path string) (Stats, error) {
	b := getStatsBuf()
	defer putStatsBuf(b)
	var (
		s        Stats
		notExist error // the first "no such cgroup"
	)
	for i, h := range [...]statsMount{r.cpu, r.memory, r.pids} {
		if h.mount == "" {
			continue
		}
		mount, rel, ok := h.dirOf(path)
		if !ok {
			if notExist == nil {
				notExist = fmt.Errorf("cgroup %s: outside the mounted subtree %s: %w", path, h.root, fs.ErrNotExist)
			}
			continue
		}
		b.setDir(mount, rel)
		// Direct calls, not a table of funcs: an indirect call would move
		// s to the heap.
		var has bool
		var err error
		switch {
		case i == 0 && r.unified:
			has, err = readCPUV2(b, &s)
		case i == 0:
			has, err = readCPUV1(b, &s)
		case i == 1 && r.unified:
			has, err = readMemoryV2(b, &s)
		case i == 1:
			has, err = readMemoryV1(b, &s)
		default:
			has, err = readPids(b, &s)
		}
		switch {
		case errors.Is(err, fs.ErrNotExist):
			if notExist == nil {
				notExist = err
			}
		case err != nil:
			return Stats{}, err
		case has && i == 0:
			s.HasCPU = true
		case has && i == 1:
			s.HasMemory = true
		case has:
			s.HasPids = true
		}
	}
	if !s.HasCPU && !s.HasMemory && !s.HasPids {
		if notExist != nil {
			return Stats{}, fmt.Errorf("read stats of cgroup %s: %w", path, notExist)
		}
		return Stats{}, fmt.Errorf("read stats of cgroup %s: no cgroup controller mounted", path)
	}
	if s.Time.IsZero() {
		s.Time = time.Now()
	}
	return s, nil
}

// readPids reads pids.current, the same file on v1 and v2. A cgroup
// without it (v2 with pids not enabled for the subtree) has no pids.
func readPids(b *statsBuf, s *Stats) (bool, error) {
	v, err := b.readUint("pids.current")
	if err != nil {
		return false, b.unlessAbsent(err)
	}
	s.Pids = v
	return true, nil
}
