package stats

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"

	"github.com/podline/podline/cgroupfs"
	"github.com/podline/podline/machine"
)

// Summary shapes a snapshot as the kubelet's Summary API. It is a pure
// function: every figure comes from s.
func Summary(s *Snapshot) *statsapi.Summary {
	t := metav1.NewTime(s.Time)
	out := &statsapi.Summary{Node: nodeStats(s, t), Pods: make([]statsapi.PodStats, 0, len(s.Pods))}
	for i := range s.Pods {
		out.Pods = append(out.Pods, podStats(&s.Pods[i], t))
	}
	return out
}

func nodeStats(s *Snapshot, t metav1.Time) statsapi.NodeStats {
	n := &s.Node
	cpu := &statsapi.CPUStats{Time: t, UsageCoreNanoSeconds: u64(n.CPUUsageNanos)}
	if n.HasNanoCores {
		cpu.UsageNanoCores = u64(n.NanoCores)
	}
	m := n.Memory
	mem := &statsapi.MemoryStats{
		Time: t, UsageBytes: u64(m.Usage), WorkingSetBytes: u64(m.WorkingSet), RSSBytes: u64(m.RSS),
		PageFaults: u64(n.PageFaults), MajorPageFaults: u64(n.MajorPageFaults),
	}
	if m.Total >= m.WorkingSet {
		mem.AvailableBytes = u64(m.Total - m.WorkingSet)
	}
	imageFs := fsStats(n.ImageFs, t)
	if n.ImageFsUsed > 0 {
		imageFs.UsedBytes = u64(n.ImageFsUsed)
	}
	out := statsapi.NodeStats{
		NodeName:  s.NodeName,
		StartTime: metav1.NewTime(n.BootTime),
		CPU:       cpu,
		Memory:    mem,
		Network:   network(n.Network, t),
		Fs:        fsStats(n.RootFs, t),
		Runtime:   &statsapi.RuntimeStats{ImageFs: imageFs, ContainerFs: fsStats(n.ImageFs, t)},
	}
	if n.MaxPID > 0 {
		out.Rlimit = &statsapi.RlimitStats{Time: t, MaxPID: &n.MaxPID, NumOfRunningProcesses: &n.Processes}
	}
	return out
}

func podStats(p *PodSample, t metav1.Time) statsapi.PodStats {
	out := statsapi.PodStats{
		PodRef:    statsapi.PodReference{Name: p.Name, Namespace: p.Namespace, UID: string(p.UID)},
		StartTime: metav1.NewTime(p.StartTime),
		CPU:       cpuStats(p.Cgroup, p.NanoCores, p.HasNanoCores, t),
		Memory:    memoryStats(p.Cgroup, t),
		Network:   network(p.Network, t),
	}
	if p.Cgroup.HasPids {
		out.ProcessStats = &statsapi.ProcessStats{ProcessCount: u64(p.Cgroup.Pids)}
	}
	for i := range p.Containers {
		c := &p.Containers[i]
		out.Containers = append(out.Containers, statsapi.ContainerStats{
			Name:      c.Name,
			StartTime: metav1.NewTime(c.StartTime),
			CPU:       cpuStats(c.Cgroup, c.NanoCores, c.HasNanoCores, t),
			Memory:    memoryStats(c.Cgroup, t),
		})
	}
	return out
}

func cpuStats(st cgroupfs.Stats, nanoCores uint64, hasRate bool, t metav1.Time) *statsapi.CPUStats {
	if !st.HasCPU {
		return nil
	}
	out := &statsapi.CPUStats{Time: t, UsageCoreNanoSeconds: u64(st.CPUUsageNanos)}
	if hasRate {
		out.UsageNanoCores = u64(nanoCores)
	}
	return out
}

// memoryStats follows cAdvisor: available is limit − working set, and only
// when there is a limit.
func memoryStats(st cgroupfs.Stats, t metav1.Time) *statsapi.MemoryStats {
	if !st.HasMemory {
		return nil
	}
	out := &statsapi.MemoryStats{
		Time: t, UsageBytes: u64(st.MemoryUsage), WorkingSetBytes: u64(st.MemoryWorkingSet),
		RSSBytes: u64(st.MemoryRSS), PageFaults: u64(st.PageFaults), MajorPageFaults: u64(st.MajorPageFaults),
	}
	if st.MemoryLimit > 0 && st.MemoryLimit >= st.MemoryWorkingSet {
		out.AvailableBytes = u64(st.MemoryLimit - st.MemoryWorkingSet)
	}
	return out
}

func fsStats(fs machine.Fs, t metav1.Time) *statsapi.FsStats {
	if fs.Capacity == 0 {
		return nil
	}
	return &statsapi.FsStats{
		Time: t, AvailableBytes: u64(fs.Available), CapacityBytes: u64(fs.Capacity), UsedBytes: u64(fs.Used),
		InodesFree: u64(fs.InodesFree), Inodes: u64(fs.Inodes), InodesUsed: u64(fs.InodesUsed),
	}
}

// network reports every interface, and the first (eth0 in a pod) as the
// default the way the kubelet does.
func network(ifaces []machine.Interface, t metav1.Time) *statsapi.NetworkStats {
	if len(ifaces) == 0 {
		return nil
	}
	out := &statsapi.NetworkStats{Time: t}
	for _, i := range ifaces {
		out.Interfaces = append(out.Interfaces, statsapi.InterfaceStats{
			Name: i.Name, RxBytes: u64(i.RxBytes), RxErrors: u64(i.RxErrors), TxBytes: u64(i.TxBytes), TxErrors: u64(i.TxErrors),
		})
	}
	out.InterfaceStats = out.Interfaces[0]
	for _, i := range out.Interfaces {
		if i.Name == "eth0" {
			out.InterfaceStats = i
		}
	}
	return out
}

func u64(v uint64) *uint64 { return &v }
