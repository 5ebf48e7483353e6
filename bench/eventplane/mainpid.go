package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// mainPID finds a container's main process: of the pids in its cgroup (on
// the unified mount, where runc mirrors every container cgroup), the one
// whose parent, the runtime's shim, is outside it.
func mainPID(cgroupRoot, podUID, containerID string) (int, error) {
	pattern := filepath.Join("/sys/fs/cgroup/unified", cgroupRoot, "kubepods", "*", "pod"+podUID, containerID, "cgroup.procs")
	matches, _ := filepath.Glob(pattern)
	if len(matches) != 1 {
		return 0, fmt.Errorf("container %s: %d cgroups match %s", containerID, len(matches), pattern)
	}
	b, err := os.ReadFile(matches[0])
	if err != nil {
		return 0, err
	}
	in := map[int]bool{}
	for _, f := range strings.Fields(string(b)) {
		n, err := strconv.Atoi(f)
		if err == nil {
			in[n] = true
		}
	}
	for pid := range in {
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue
		}
		s := string(stat)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(f) < 2 {
			continue
		}
		if ppid, _ := strconv.Atoi(f[1]); !in[ppid] {
			return pid, nil
		}
	}
	return 0, fmt.Errorf("container %s: no main process among %v", containerID, strings.Fields(string(b)))
}
