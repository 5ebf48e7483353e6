package procstat

import (
	"os"
	"strconv"
	"strings"
)

// ByName returns the pids of the processes whose command name (comm) is one
// of names, e.g. the runtime shims of every pod.
func ByName(names ...string) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		comm, err := os.ReadFile("/proc/" + e.Name() + "/comm")
		if err == nil && want[strings.TrimSpace(string(comm))] {
			pids = append(pids, pid)
		}
	}
	return pids
}

// GroupCPU tracks the CPU of a changing set of processes, such as
// containerd and its shims while pods come and go: each sample adds what
// every process it knows spent since it last saw it.
type GroupCPU struct {
	find func() []int
	last map[int]float64
	sum  float64
}

// NewGroupCPU starts tracking the processes find returns, from now.
func NewGroupCPU(find func() []int) *GroupCPU {
	g := &GroupCPU{find: find, last: map[int]float64{}}
	for _, pid := range find() {
		if c, err := Read(pid, false); err == nil {
			g.last[pid] = c.CPUSeconds()
		}
	}
	return g
}

// Sample reads the group now and returns its CPU seconds since
// NewGroupCPU. A process that appeared since the last sample counts whole;
// what one spent between its last sample and its exit is lost, so sample
// often when processes are short-lived.
func (g *GroupCPU) Sample() float64 {
	seen := map[int]bool{}
	for _, pid := range g.find() {
		c, err := Read(pid, false)
		if err != nil {
			continue
		}
		seen[pid] = true
		now := c.CPUSeconds()
		g.sum += now - g.last[pid]
		g.last[pid] = now
	}
	for pid := range g.last {
		if !seen[pid] {
			delete(g.last, pid)
		}
	}
	return g.sum
}

// ByNameArg returns the pids of ByName(names...) whose command line holds
// arg, e.g. the shims of one containerd, named by its socket.
func ByNameArg(arg string, names ...string) []int {
	var pids []int
	for _, pid := range ByName(names...) {
		cmdline, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
		if err == nil && strings.Contains(strings.ReplaceAll(string(cmdline), "\x00", " "), arg) {
			pids = append(pids, pid)
		}
	}
	return pids
}
