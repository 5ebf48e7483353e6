package node

import (
	"time"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/podline/podline/machine"
)

// Pressures are the node's resource-pressure conditions: the
// MemoryPressure, DiskPressure and PIDPressure of the Node status.
type Pressures struct {
	Memory, Disk, PID bool
}

// Observation is what a signal measured: how much is left, and of how
// much (the base of a percentage threshold).
type Observation struct {
	Available, Capacity int64
}

// Observations map an eviction signal ("memory.available",
// "nodefs.available", "nodefs.inodesFree", "imagefs.available",
// "imagefs.inodesFree", "pid.available") to what it measured. As the
// kubelet's eviction manager computes them, memory.available is capacity
// less the working set, not MemAvailable, and pid.available is pid_max less
// the running processes.
type Observations map[string]Observation

// MachineObservations are the memory and nodefs signals from what package
// machine read: memory.available is the total less the working set, and
// nodefs is the filesystem of --root-dir.
func MachineObservations(mem machine.Memory, nodefs machine.Fs) Observations {
	return Observations{
		"memory.available":  {Available: int64(mem.Total) - int64(mem.WorkingSet), Capacity: int64(mem.Total)},
		"nodefs.available":  {Available: int64(nodefs.Available), Capacity: int64(nodefs.Capacity)},
		"nodefs.inodesFree": {Available: int64(nodefs.InodesFree), Capacity: int64(nodefs.Inodes)},
	}
}

// Pressure says which conditions the thresholds put the node under: a
// threshold is crossed when less than its amount is available. A signal
// with no observation crosses nothing.
func Pressure(thresholds []Threshold, obs Observations) Pressures {
	var p Pressures
	for _, t := range thresholds {
		o, ok := obs[t.Signal]
		if !ok || o.Available >= t.amount(*resource.NewQuantity(o.Capacity, resource.DecimalSI)) {
			continue
		}
		switch t.Signal {
		case "memory.available":
			p.Memory = true
		case "nodefs.available", "nodefs.inodesFree", "imagefs.available", "imagefs.inodesFree":
			p.Disk = true
		case "pid.available":
			p.PID = true
		}
	}
	return p
}

// PressureHold keeps a pressure condition on for Period after it was last
// observed (--eviction-pressure-transition-period, 5m in the kubelet), so
// a node near a threshold does not flap between pressure and none. Not
// safe for concurrent use: one status loop owns it.
type PressureHold struct {
	Period time.Duration
	last   [3]time.Time // memory, disk, pid: when last observed
}

// Observe records p at now and returns the conditions to report.
func (h *PressureHold) Observe(now time.Time, p Pressures) Pressures {
	in := [3]bool{p.Memory, p.Disk, p.PID}
	var out [3]bool
	for i := range in {
		if in[i] {
			h.last[i] = now
		}
		out[i] = !h.last[i].IsZero() && now.Sub(h.last[i]) < h.Period
		out[i] = out[i] || in[i]
	}
	return Pressures{Memory: out[0], Disk: out[1], PID: out[2]}
}
