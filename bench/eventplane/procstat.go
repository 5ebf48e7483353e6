package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// clockTicks is sysconf(_SC_CLK_TCK): the unit of utime and stime in
// /proc/<pid>/stat. It is 100 on every Linux build the project runs on.
const clockTicks = 100

// procCost is a process's cumulative cost at one moment.
type procCost struct {
	// ticks is utime+stime of the whole process, exited threads included.
	ticks uint64
	// threads holds each live thread's own counters, by thread id: the
	// kernel counts context switches per thread only, and schedstat's
	// run time has nanosecond resolution where a short window holds
	// few ticks.
	threads map[int]threadCost
}

type threadCost struct {
	runNS       uint64
	ctxSwitches uint64 // voluntary + involuntary
}

// since returns the run time and context switches of the threads between
// an earlier sample and c. A thread born meanwhile counts whole; one that
// exited meanwhile is lost (Go threads rarely exit).
func (c procCost) since(earlier procCost) (runNS, ctxSwitches uint64) {
	for tid, t := range c.threads {
		e, ok := earlier.threads[tid]
		if !ok || e.runNS > t.runNS || e.ctxSwitches > t.ctxSwitches {
			e = threadCost{}
		}
		runNS += t.runNS - e.runNS
		ctxSwitches += t.ctxSwitches - e.ctxSwitches
	}
	return runNS, ctxSwitches
}

func readProcCost(pid int) (procCost, error) {
	c := procCost{threads: map[int]threadCost{}}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return c, err
	}
	if c.ticks, err = statTicks(string(stat)); err != nil {
		return c, fmt.Errorf("/proc/%d/stat: %w", pid, err)
	}
	tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*", pid))
	if err != nil {
		return c, err
	}
	for _, t := range tasks {
		tid, err := strconv.Atoi(filepath.Base(t))
		if err != nil {
			continue
		}
		// A thread may exit between the glob and the reads: skip it.
		sched, err := os.ReadFile(filepath.Join(t, "schedstat"))
		if err != nil {
			continue
		}
		status, err := os.ReadFile(filepath.Join(t, "status"))
		if err != nil {
			continue
		}
		var tc threadCost
		if f := strings.Fields(string(sched)); len(f) > 0 {
			tc.runNS, _ = strconv.ParseUint(f[0], 10, 64)
		}
		tc.ctxSwitches = statusSwitches(string(status))
		c.threads[tid] = tc
	}
	return c, nil
}

// statTicks returns utime+stime from a /proc/<pid>/stat line. The command
// name may hold spaces and parentheses, so fields count from the last ")".
func statTicks(stat string) (uint64, error) {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, fmt.Errorf("no command name in %q", stat)
	}
	// After ")": state is field 3, utime 14, stime 15.
	f := strings.Fields(stat[i+1:])
	if len(f) < 13 {
		return 0, fmt.Errorf("short stat line %q", stat)
	}
	utime, err := strconv.ParseUint(f[11], 10, 64)
	if err != nil {
		return 0, err
	}
	stime, err := strconv.ParseUint(f[12], 10, 64)
	if err != nil {
		return 0, err
	}
	return utime + stime, nil
}

func statusSwitches(status string) uint64 {
	var n uint64
	for _, line := range strings.Split(status, "\n") {
		k, v, ok := strings.Cut(line, ":")
		if ok && (k == "voluntary_ctxt_switches" || k == "nonvoluntary_ctxt_switches") {
			x, _ := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
			n += x
		}
	}
	return n
}

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
