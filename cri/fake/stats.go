package fake

import (
	"context"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// Stats are made up but consistent: each running container burns a fixed
// share of a core (5–100 millicores) from its start, so cumulative CPU grows
// with time, and holds a fixed working set (8–64 MiB). Only running
// containers and ready sandboxes report.

const pauseMemBytes = 1 << 20 // what a sandbox's pause process holds

func (s *Server) ListContainerStats(_ context.Context, req *runtimeapi.ListContainerStatsRequest) (*runtimeapi.ListContainerStatsResponse, error) {
	f := req.GetFilter()
	now := time.Now().UnixNano()
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*runtimeapi.ContainerStats
	s.eachContainerLocked(f.GetId(), f.GetPodSandboxId(), f.GetLabelSelector(), func(c *container) {
		if c.state == runtimeapi.ContainerState_CONTAINER_RUNNING {
			out = append(out, c.stats(now))
		}
	})
	return &runtimeapi.ListContainerStatsResponse{Stats: out}, nil
}

func (s *Server) ListPodSandboxStats(_ context.Context, req *runtimeapi.ListPodSandboxStatsRequest) (*runtimeapi.ListPodSandboxStatsResponse, error) {
	f := req.GetFilter()
	now := time.Now().UnixNano()
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*runtimeapi.PodSandboxStats
	add := func(sb *sandbox) {
		if sb.state == runtimeapi.PodSandboxState_SANDBOX_READY && matchLabels(f.GetLabelSelector(), sb.labels) {
			out = append(out, sb.stats(now))
		}
	}
	if id := f.GetId(); id != "" {
		if sb := s.sandboxes[id]; sb != nil {
			add(sb)
		}
	} else {
		for _, sb := range s.sandboxes {
			add(sb)
		}
	}
	return &runtimeapi.ListPodSandboxStatsResponse{Stats: out}, nil
}

func (c *container) stats(now int64) *runtimeapi.ContainerStats {
	ran := uint64(max(now-c.startedAt, 0))
	return &runtimeapi.ContainerStats{
		Attributes: &runtimeapi.ContainerAttributes{
			Id: c.id, Metadata: c.metadata(), Labels: c.labels, Annotations: c.annotations,
		},
		Cpu: cpuUsage(now, ran*c.cpuMilli/1000, c.cpuMilli),
		Memory: &runtimeapi.MemoryUsage{
			Timestamp:       now,
			WorkingSetBytes: u64(c.memBytes),
			UsageBytes:      u64(c.memBytes + c.memBytes/4),
			RssBytes:        u64(c.memBytes * 3 / 4),
		},
		WritableLayer: &runtimeapi.FilesystemUsage{
			Timestamp:  now,
			FsId:       &runtimeapi.FilesystemIdentifier{Mountpoint: containerFsMount},
			UsedBytes:  u64(writableLayerBytes),
			InodesUsed: u64(writableLayerInodes),
		},
	}
}

func (sb *sandbox) stats(now int64) *runtimeapi.PodSandboxStats {
	var cpuNs, milli uint64
	mem := uint64(pauseMemBytes)
	var containers []*runtimeapi.ContainerStats
	for _, c := range sb.containers {
		if c.state != runtimeapi.ContainerState_CONTAINER_RUNNING {
			continue
		}
		cs := c.stats(now)
		containers = append(containers, cs)
		cpuNs += cs.Cpu.UsageCoreNanoSeconds.Value
		milli += c.cpuMilli
		mem += c.memBytes
	}
	// Traffic grows with the sandbox's age: about 1 KiB/s each way.
	age := uint64(max(now-sb.createdAt, 0)) / uint64(time.Second)
	return &runtimeapi.PodSandboxStats{
		Attributes: &runtimeapi.PodSandboxAttributes{
			Id: sb.id, Metadata: sb.metadata(), Labels: sb.labels, Annotations: sb.annotations,
		},
		Linux: &runtimeapi.LinuxPodSandboxStats{
			Cpu:    cpuUsage(now, cpuNs, milli),
			Memory: &runtimeapi.MemoryUsage{Timestamp: now, WorkingSetBytes: u64(mem), UsageBytes: u64(mem + mem/4)},
			Network: &runtimeapi.NetworkUsage{
				Timestamp: now,
				DefaultInterface: &runtimeapi.NetworkInterfaceUsage{
					Name: "eth0", RxBytes: u64(age << 10), TxBytes: u64(age << 10), RxErrors: u64(0), TxErrors: u64(0),
				},
			},
			Process:    &runtimeapi.ProcessUsage{Timestamp: now, ProcessCount: u64(uint64(1 + len(containers)))},
			Containers: containers,
		},
	}
}

func cpuUsage(now int64, coreNs, milli uint64) *runtimeapi.CpuUsage {
	return &runtimeapi.CpuUsage{
		Timestamp:            now,
		UsageCoreNanoSeconds: u64(coreNs),
		UsageNanoCores:       u64(milli * 1_000_000),
	}
}

func u64(v uint64) *runtimeapi.UInt64Value { return &runtimeapi.UInt64Value{Value: v} }
