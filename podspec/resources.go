package podspec

import (
	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podline/podline/cgroupfs"
)

// linuxResources maps a container's requests and limits onto cgroup
// settings. A missing request defaults to the limit.
func linuxResources(pod *v1.Pod, spec *v1.Container, node *Node) *runtimeapi.LinuxContainerResources {
	r := &runtimeapi.LinuxContainerResources{OomScoreAdj: oomScoreAdj(pod, spec, node)}
	cpuReq, cpuLim := ContainerRequest(spec, v1.ResourceCPU, true), ContainerLimit(spec, v1.ResourceCPU, true)
	if cpuReq == 0 {
		cpuReq = cpuLim
	}
	r.CpuShares = int64(cgroupfs.MilliCPUToShares(cpuReq))
	if cpuLim > 0 {
		r.CpuQuota = cgroupfs.MilliCPUToQuota(cpuLim, cgroupfs.CFSPeriodUS)
		r.CpuPeriod = int64(cgroupfs.CFSPeriodUS)
	}
	r.MemoryLimitInBytes = ContainerLimit(spec, v1.ResourceMemory, false)
	return r
}

func ContainerRequest(c *v1.Container, name v1.ResourceName, milli bool) int64 {
	return quantity(c.Resources.Requests, name, milli)
}

func ContainerLimit(c *v1.Container, name v1.ResourceName, milli bool) int64 {
	return quantity(c.Resources.Limits, name, milli)
}

func quantity(rl v1.ResourceList, name v1.ResourceName, milli bool) int64 {
	q, ok := rl[name]
	if !ok {
		return 0
	}
	if milli {
		return q.MilliValue()
	}
	return q.Value()
}

// oomScoreAdj ranks containers for the OOM killer by QoS class: Guaranteed
// last, BestEffort first, Burstable by how much memory it requested.
func oomScoreAdj(pod *v1.Pod, spec *v1.Container, node *Node) int64 {
	switch cgroupfs.QOSClass(pod) {
	case v1.PodQOSGuaranteed:
		return -997
	case v1.PodQOSBestEffort:
		return 1000
	}
	mem := ContainerRequest(spec, v1.ResourceMemory, false)
	if mem == 0 {
		mem = ContainerLimit(spec, v1.ResourceMemory, false)
	}
	if node.MemoryBytes <= 0 {
		return 999
	}
	// Burstable stays strictly between Guaranteed (-997, so at least 3) and
	// BestEffort (1000).
	adj := 1000 - 1000*mem/node.MemoryBytes
	return min(max(adj, 1000-997), 999)
}
