// Package stats turns cgroupfs and /proc readings into the kubelet's stats
// shapes: the Summary API (/stats/summary), the metrics-server endpoint
// (/metrics/resource) and a cAdvisor-compatible subset
// (/metrics/cadvisor). Nothing is polled in the background: a Collector
// reads what it needs when an endpoint is asked, and the shapes are pure
// functions of that Snapshot.
package stats

import (
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/podline/podline/cgroupfs"
	"github.com/podline/podline/machine"
)

// Snapshot is one reading of the node and its pods.
type Snapshot struct {
	Time     time.Time
	NodeName string
	Node     NodeSample
	Pods     []PodSample
}

// NodeSample is the node's own usage.
type NodeSample struct {
	BootTime      time.Time
	CPUUsageNanos uint64
	NanoCores     uint64
	HasNanoCores  bool
	Memory        machine.Memory
	// PageFaults and MajorPageFaults are the node's, from /proc/vmstat.
	PageFaults, MajorPageFaults uint64
	RootFs                      machine.Fs
	ImageFs                     machine.Fs
	// ImageFsUsed is what the runtime says its images use (0 if unknown).
	ImageFsUsed uint64
	Network     []machine.Interface
	MaxPID      int64
	Processes   int64
}

// PodSample is one pod: its cgroup, its running containers and its
// network namespace.
type PodSample struct {
	Name, Namespace string
	UID             types.UID
	StartTime       time.Time
	Cgroup          cgroupfs.Stats
	NanoCores       uint64
	HasNanoCores    bool
	Containers      []ContainerSample
	// Network is the pod's network namespace (nil for host-network pods,
	// whose traffic is the node's).
	Network []machine.Interface
}

// ContainerSample is one running container.
type ContainerSample struct {
	Name, ID     string
	Image        string
	StartTime    time.Time
	Cgroup       cgroupfs.Stats
	NanoCores    uint64
	HasNanoCores bool
}
