// Package procstat reads what a process has cost so far from /proc: CPU
// time (its own and its reaped children's), per-thread run time and
// context switches (wakeups), and memory. The benchmarks diff two samples.
// It reads only; it never signals or changes a process.
package procstat

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// ClockTicks is sysconf(_SC_CLK_TCK): the unit of utime and stime in
// /proc/<pid>/stat. It is 100 on every Linux build the project runs on.
const ClockTicks = 100

// Cost is a process's cumulative cost at one moment.
type Cost struct {
	// Ticks is utime+stime of the whole process, exited threads included;
	// SysTicks the stime part: the kernel's work on its behalf.
	Ticks, SysTicks uint64
	// ChildTicks is cutime+cstime: the children it has waited for. A
	// runtime shim's runc invocations land here.
	ChildTicks uint64
	// Threads holds each live thread's own counters, by thread id: the
	// kernel counts context switches per thread only, and schedstat's run
	// time has nanosecond resolution where a short window holds few ticks.
	Threads map[int]Thread
	// RSS and HWM are VmRSS and VmHWM (peak RSS) in bytes.
	RSS, HWM uint64
}

// Thread is one thread's counters.
type Thread struct {
	RunNS       uint64
	CtxSwitches uint64 // voluntary + involuntary
}

// CPUSeconds is the process's own CPU time plus its reaped children's.
func (c Cost) CPUSeconds() float64 {
	return float64(c.Ticks+c.ChildTicks) / ClockTicks
}

// Since returns the run time and context switches of the threads between
// an earlier sample and c. A thread born meanwhile counts whole; one that
// exited meanwhile is lost (Go threads rarely exit).
func (c Cost) Since(earlier Cost) (runNS, ctxSwitches uint64) {
	for tid, t := range c.Threads {
		e, ok := earlier.Threads[tid]
		if !ok || e.RunNS > t.RunNS || e.CtxSwitches > t.CtxSwitches {
			e = Thread{}
		}
		runNS += t.RunNS - e.RunNS
		ctxSwitches += t.CtxSwitches - e.CtxSwitches
	}
	return runNS, ctxSwitches
}

// Read samples pid. withThreads also reads every thread (costlier: two
// files per thread).
func Read(pid int, withThreads bool) (Cost, error) {
	var c Cost
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return c, err
	}
	var user uint64
	if user, c.SysTicks, c.ChildTicks, err = StatTicks(string(stat)); err != nil {
		return c, fmt.Errorf("/proc/%d/stat: %w", pid, err)
	}
	c.Ticks = user + c.SysTicks
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return c, err
	}
	c.RSS = statusKiB(string(status), "VmRSS") * 1024
	c.HWM = statusKiB(string(status), "VmHWM") * 1024
	if !withThreads {
		return c, nil
	}
	c.Threads = map[int]Thread{}
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
		st, err := os.ReadFile(filepath.Join(t, "status"))
		if err != nil {
			continue
		}
		var tc Thread
		if f := strings.Fields(string(sched)); len(f) > 0 {
			tc.RunNS, _ = strconv.ParseUint(f[0], 10, 64)
		}
		tc.CtxSwitches = StatusSwitches(string(st))
		c.Threads[tid] = tc
	}
	return c, nil
}

// StatTicks returns utime, stime and cutime+cstime from a /proc/<pid>/stat
// line. The command name may hold spaces and parentheses, so fields count
// from the last ")".
func StatTicks(stat string) (user, sys, children uint64, err error) {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, 0, 0, fmt.Errorf("no command name in %q", stat)
	}
	// After ")": state is field 3, utime 14, stime 15, cutime 16, cstime 17.
	f := strings.Fields(stat[i+1:])
	if len(f) < 15 {
		return 0, 0, 0, fmt.Errorf("short stat line %q", stat)
	}
	var v [4]uint64
	for k := range v {
		if v[k], err = strconv.ParseUint(f[11+k], 10, 64); err != nil {
			return 0, 0, 0, fmt.Errorf("stat field %d: %w", 14+k, err)
		}
	}
	return v[0], v[1], v[2] + v[3], nil
}

// StatusSwitches sums the voluntary and involuntary context switches of a
// /proc/<pid>/task/<tid>/status file.
func StatusSwitches(status string) uint64 {
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

// statusKiB reads a "Key:   123 kB" line of /proc/<pid>/status.
func statusKiB(status, key string) uint64 {
	for _, line := range strings.Split(status, "\n") {
		k, v, ok := strings.Cut(line, ":")
		if ok && k == key {
			x, _ := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return x
		}
	}
	return 0
}
