package cgroupfs

import (
	"bytes"
	"fmt"
	"os"
	"strings"

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

// parseStatsMounts reads mountinfo lines such as
//
//	35 31 0:32 / /sys/fs/cgroup/memory rw,relatime shared:9 - cgroup cgroup rw,memory
//
// A hierarchy mounted more than once keeps its first mount of the whole
// hierarchy (root "/"), else its first mount.
func parseStatsMounts(mountinfo []byte) statsMounts {
	var m statsMounts
	keep := func(h *statsMount, root, mount string) {
		if h.mount == "" || (h.root != "/" && root == "/") {
			*h = statsMount{mount: mount, root: root}
		}
	}
	for line := range bytes.Lines(mountinfo) {
		fields := strings.Fields(string(line))
		sep := -1
		for i := 6; i < len(fields); i++ {
			if fields[i] == "-" {
				sep = i
				break
			}
		}
		if sep < 0 || sep+3 >= len(fields) {
			continue
		}
		root, mount := unescapeMountinfo(fields[3]), unescapeMountinfo(fields[4])
		switch fields[sep+1] {
		case "cgroup2":
			keep(&m.cgroup2, root, mount)
		case "cgroup":
			for opt := range strings.SplitSeq(fields[sep+3], ",") {
				switch opt {
				case "cpuacct":
					keep(&m.cpuacct, root, mount)
				case "memory":
					keep(&m.memory, root, mount)
				case "pids":
					keep(&m.pids, root, mount)
				}
			}
		}
	}
	return m
}

// unescapeMountinfo undoes the kernel's octal escapes of space, tab,
// newline and backslash (`\040`) in mountinfo paths.
func unescapeMountinfo(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) && isOctal(s[i+1]) && isOctal(s[i+2]) && isOctal(s[i+3]) {
			b.WriteByte((s[i+1]-'0')<<6 | (s[i+2]-'0')<<3 | (s[i+3] - '0'))
			i += 3
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func isOctal(c byte) bool { return c >= '0' && c <= '7' }
