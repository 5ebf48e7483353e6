package cgroupfs

import (
	"fmt"
	"os"

	"github.com/containerd/cgroups/v3"
)

// NewReader returns a Reader of this host's cgroups: on a unified host it
// reads cgroup2 files from the cgroup2 mount; on a legacy or hybrid host
// (cgroup2 mounted without controllers, as on the project's machines) it
// reads the v1 cpuacct, memory and pids hierarchies wherever
// /proc/self/mountinfo says they are mounted (cpuacct often together with
// cpu as "cpu,cpuacct"). A missing pids hierarchy is fine: Stats then
// says HasPids false.
func NewReader() (*Reader, error) {
	mountinfo, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil, fmt.Errorf("find cgroup mounts: %w", err)
	}
	return readerFromMountinfo(cgroups.Mode(), mountinfo)
}

func readerFromMountinfo(mode cgroups.CGMode, mountinfo []byte) (*Reader, error) {
	m := parseStatsMounts(mountinfo)
	switch mode {
	case cgroups.Unified:
		if m.cgroup2.mount == "" {
			return nil, fmt.Errorf("find cgroup mounts: unified host without a cgroup2 mount in mountinfo")
		}
		return &Reader{unified: true, cpu: m.cgroup2, memory: m.cgroup2, pids: m.cgroup2}, nil
	case cgroups.Legacy, cgroups.Hybrid:
		if m.cpuacct.mount == "" && m.memory.mount == "" {
			return nil, fmt.Errorf("find cgroup mounts: neither cpuacct nor memory cgroup v1 hierarchy is mounted")
		}
		return &Reader{cpu: m.cpuacct, memory: m.memory, pids: m.pids}, nil
	}
	return nil, fmt.Errorf("find cgroup mounts: no cgroup filesystem at /sys/fs/cgroup")
}

// statsMounts are the hierarchies Stats come from.
type statsMounts struct {
	cgroup2, cpuacct, memory, pids statsMount
}

// parseStatsMounts picks the stats hierarchies out of mountinfo. A
// hierarchy mounted more than once keeps its first mount of the whole
// hierarchy (root "/"), else its first mount.
func parseStatsMounts(mountinfo []byte) statsMounts {
	var m statsMounts
	keep := func(h *statsMount, mt mount) {
		if h.mount == "" || (h.root != "/" && mt.root == "/") {
			*h = statsMount{mount: mt.dir, root: mt.root}
		}
	}
	for _, mt := range parseMounts(mountinfo) {
		if mt.v2 {
			keep(&m.cgroup2, mt)
			continue
		}
		for _, opt := range mt.options {
			switch opt {
			case "cpuacct":
				keep(&m.cpuacct, mt)
			case "memory":
				keep(&m.memory, mt)
			case "pids":
				keep(&m.pids, mt)
			}
		}
	}
	return m
}
