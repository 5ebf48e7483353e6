package fake

import (
	"context"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// Stats are made up but consistent: each running container burns a fixed
// share of a core (5–100 millicores) from its start, so cumulative CPU grows
// with time, and holds a fixed working set (8–64 MiB). Only running
// containers and ready sandboxes report.

const pauseMemBytes = 1 << 20 // what a sandbox's pause process holds

// The lists below pick the running containers under Server.mu and build
// the answers after releasing it: what they read then (identity, start
// time, usage shares) never changes once a container runs, and at 10,000
// pods building is most of the work, which other calls need not wait for.

func (s *Server) ListContainerStats(_ context.Context, req *runtimeapi.ListContainerStatsRequest) (*runtimeapi.ListContainerStatsResponse, error) {
	f := req.GetFilter()
	var running []*container
	s.mu.Lock()
	s.eachContainerLocked(f.GetId(), f.GetPodSandboxId(), f.GetLabelSelector(), func(c *container) {
		if c.state == runtimeapi.ContainerState_CONTAINER_RUNNING {
			running = append(running, c)
		}
	})
	s.mu.Unlock()
	now := time.Now().UnixNano()
	out := make([]*runtimeapi.ContainerStats, len(running))
	for i, c := range running {
		out[i] = c.stats(now, s.opts.FsMountpoint)
	}
	return &runtimeapi.ListContainerStatsResponse{Stats: out}, nil
}

func (s *Server) ListPodSandboxStats(_ context.Context, req *runtimeapi.ListPodSandboxStatsRequest) (*runtimeapi.ListPodSandboxStatsResponse, error) {
	f := req.GetFilter()
	// Each ready sandbox and its running containers, as one flat slice of
	// containers (no allocation per sandbox) cut by end offsets.
	type pick struct {
		sb  *sandbox
		end int
	}
	var picks []pick
	var running []*container
	add := func(sb *sandbox) {
		if sb.state == runtimeapi.PodSandboxState_SANDBOX_READY && matchLabels(f.GetLabelSelector(), sb.labels) {
			running = sb.appendRunningLocked(running)
			picks = append(picks, pick{sb, len(running)})
		}
	}
	s.mu.Lock()
	if id := f.GetId(); id != "" {
		if sb := s.sandboxes[id]; sb != nil {
			add(sb)
		}
	} else {
		candidates, indexed := s.byPod.sandboxesOf(f.GetLabelSelector())
		if !indexed {
			candidates = s.sandboxes
		}
		for _, sb := range candidates {
			add(sb)
		}
	}
	s.mu.Unlock()
	now := time.Now().UnixNano()
	out := make([]*runtimeapi.PodSandboxStats, len(picks))
	begin := 0
	for i, p := range picks {
		out[i] = p.sb.stats(now, s.opts.FsMountpoint, running[begin:p.end])
		begin = p.end
	}
	return &runtimeapi.ListPodSandboxStatsResponse{Stats: out}, nil
}

func (sb *sandbox) appendRunningLocked(dst []*container) []*container {
	for _, c := range sb.containers {
		if c.state == runtimeapi.ContainerState_CONTAINER_RUNNING {
			dst = append(dst, c)
		}
	}
	return dst
}

// ContainerStats answers for one container; one that is not running has
// no usage, only its identity.
func (s *Server) ContainerStats(_ context.Context, req *runtimeapi.ContainerStatsRequest) (*runtimeapi.ContainerStatsResponse, error) {
	now := time.Now().UnixNano()
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.containers[req.ContainerId]
	if c == nil {
		return nil, status.Errorf(codes.NotFound, "container %q not found", req.ContainerId)
	}
	if c.state != runtimeapi.ContainerState_CONTAINER_RUNNING {
		return &runtimeapi.ContainerStatsResponse{Stats: &runtimeapi.ContainerStats{Attributes: c.attributes()}}, nil
	}
	return &runtimeapi.ContainerStatsResponse{Stats: c.stats(now, s.opts.FsMountpoint)}, nil
}

// PodSandboxStats answers for one sandbox, ready or not.
func (s *Server) PodSandboxStats(_ context.Context, req *runtimeapi.PodSandboxStatsRequest) (*runtimeapi.PodSandboxStatsResponse, error) {
	now := time.Now().UnixNano()
	s.mu.Lock()
	defer s.mu.Unlock()
	sb := s.sandboxes[req.PodSandboxId]
	if sb == nil {
		return nil, status.Errorf(codes.NotFound, "sandbox %q not found", req.PodSandboxId)
	}
	return &runtimeapi.PodSandboxStatsResponse{Stats: sb.stats(now, s.opts.FsMountpoint, sb.appendRunningLocked(nil))}, nil
}

// ListMetricDescriptors and ListPodSandboxMetrics describe no metrics: the
// fake has no cAdvisor-style metrics to export, and an empty answer tells a
// kubelet so without the error an unimplemented call would log.
func (s *Server) ListMetricDescriptors(context.Context, *runtimeapi.ListMetricDescriptorsRequest) (*runtimeapi.ListMetricDescriptorsResponse, error) {
	return &runtimeapi.ListMetricDescriptorsResponse{}, nil
}

func (s *Server) ListPodSandboxMetrics(context.Context, *runtimeapi.ListPodSandboxMetricsRequest) (*runtimeapi.ListPodSandboxMetricsResponse, error) {
	return &runtimeapi.ListPodSandboxMetricsResponse{}, nil
}

func (c *container) attributes() *runtimeapi.ContainerAttributes {
	return &runtimeapi.ContainerAttributes{Id: c.id, Metadata: c.metadata(), Labels: c.labels, Annotations: c.annotations}
}

func (c *container) stats(now int64, fsMountpoint string) *runtimeapi.ContainerStats {
	ran := uint64(max(now-c.startedAt, 0))
	return &runtimeapi.ContainerStats{
		Attributes: c.attributes(),
		Cpu:        cpuUsage(now, ran*c.cpuMilli/1000, c.cpuMilli),
		Memory: &runtimeapi.MemoryUsage{
			Timestamp:       now,
			WorkingSetBytes: u64(c.memBytes),
			UsageBytes:      u64(c.memBytes + c.memBytes/4),
			RssBytes:        u64(c.memBytes * 3 / 4),
		},
		WritableLayer: &runtimeapi.FilesystemUsage{
			Timestamp:  now,
			FsId:       &runtimeapi.FilesystemIdentifier{Mountpoint: fsMountpoint},
			UsedBytes:  u64(writableLayerBytes),
			InodesUsed: u64(writableLayerInodes),
		},
	}
}

// stats reports sb with its running containers.
func (sb *sandbox) stats(now int64, fsMountpoint string, running []*container) *runtimeapi.PodSandboxStats {
	var cpuNs, milli uint64
	mem := uint64(pauseMemBytes)
	containers := make([]*runtimeapi.ContainerStats, 0, len(running))
	for _, c := range running {
		cs := c.stats(now, fsMountpoint)
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
