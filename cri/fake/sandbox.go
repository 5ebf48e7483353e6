package fake

import (
	"context"
	"fmt"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

func (s *Server) RunPodSandbox(_ context.Context, req *runtimeapi.RunPodSandboxRequest) (*runtimeapi.RunPodSandboxResponse, error) {
	cfg := req.GetConfig()
	md := cfg.GetMetadata()
	if md == nil {
		return nil, status.Error(codes.InvalidArgument, "sandbox config must include metadata")
	}
	ns := cfg.GetLinux().GetSecurityContext().GetNamespaceOptions()
	sb := &sandbox{
		id:             newID(),
		name:           md.Name,
		namespace:      md.Namespace,
		uid:            md.Uid,
		attempt:        md.Attempt,
		labels:         cfg.Labels,
		annotations:    cfg.Annotations,
		runtimeHandler: req.RuntimeHandler,
		logDir:         cfg.LogDirectory,
		netMode:        ns.GetNetwork(),
		pidMode:        ns.GetPid(),
		ipcMode:        ns.GetIpc(),
		nameKey:        fmt.Sprintf("%s_%s_%s_%d", md.Name, md.Namespace, md.Uid, md.Attempt),
		state:          runtimeapi.PodSandboxState_SANDBOX_READY,
		containers:     make(map[string]*container),
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	if owner, taken := s.names[sb.nameKey]; taken {
		return nil, status.Errorf(codes.AlreadyExists, "sandbox name %q is reserved for %s", sb.nameKey, owner)
	}
	if sb.netMode != runtimeapi.NamespaceMode_NODE {
		host, ip, ok := s.ips.take()
		if !ok {
			return nil, status.Errorf(codes.ResourceExhausted, "no free address in %s", s.ips.subnet())
		}
		sb.ipHost, sb.ip = host, ip
	}
	sb.createdAt = time.Now().UnixNano()
	s.sandboxes[sb.id] = sb
	s.names[sb.nameKey] = sb.id
	s.byPod.addSandbox(sb)
	s.emitLocked(sb.id, sb, runtimeapi.ContainerEventType_CONTAINER_CREATED_EVENT)
	s.emitLocked(sb.id, sb, runtimeapi.ContainerEventType_CONTAINER_STARTED_EVENT)
	return &runtimeapi.RunPodSandboxResponse{PodSandboxId: sb.id}, nil
}

// StopPodSandbox kills the sandbox's running containers and frees its
// address. An unknown or stopped sandbox is not an error: the CRI expects
// repeated stops.
func (s *Server) StopPodSandbox(_ context.Context, req *runtimeapi.StopPodSandboxRequest) (*runtimeapi.StopPodSandboxResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if sb := s.sandboxes[req.PodSandboxId]; sb != nil {
		s.stopSandboxLocked(sb)
	}
	return &runtimeapi.StopPodSandboxResponse{}, nil
}

func (s *Server) stopSandboxLocked(sb *sandbox) {
	for _, c := range sb.containers {
		if c.state == runtimeapi.ContainerState_CONTAINER_RUNNING {
			s.exitLocked(c, c.stopExitCode)
		}
	}
	if sb.state != runtimeapi.PodSandboxState_SANDBOX_READY {
		return
	}
	sb.setState(runtimeapi.PodSandboxState_SANDBOX_NOTREADY)
	if sb.ipHost != 0 {
		// The address goes back to the pool; the status keeps naming it,
		// as containerd's does.
		s.ips.release(sb.ipHost)
		sb.ipHost = 0
	}
	s.emitLocked(sb.id, sb, runtimeapi.ContainerEventType_CONTAINER_STOPPED_EVENT)
}

// RemovePodSandbox stops the sandbox if needed and removes it with all its
// containers. An unknown sandbox is not an error.
func (s *Server) RemovePodSandbox(_ context.Context, req *runtimeapi.RemovePodSandboxRequest) (*runtimeapi.RemovePodSandboxResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sb := s.sandboxes[req.PodSandboxId]
	if sb == nil {
		return &runtimeapi.RemovePodSandboxResponse{}, nil
	}
	s.stopSandboxLocked(sb)
	for _, c := range sb.containers {
		s.removeContainerLocked(c, sb)
	}
	delete(s.sandboxes, sb.id)
	delete(s.names, sb.nameKey)
	s.byPod.removeSandbox(sb)
	// Like containerd: the sandbox is gone, so the event carries no status.
	s.emitLocked(sb.id, nil, runtimeapi.ContainerEventType_CONTAINER_DELETED_EVENT)
	return &runtimeapi.RemovePodSandboxResponse{}, nil
}

func (s *Server) PodSandboxStatus(_ context.Context, req *runtimeapi.PodSandboxStatusRequest) (*runtimeapi.PodSandboxStatusResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sb := s.sandboxes[req.PodSandboxId]
	if sb == nil {
		return nil, status.Errorf(codes.NotFound, "sandbox %q not found", req.PodSandboxId)
	}
	return &runtimeapi.PodSandboxStatusResponse{
		Status:             sb.status(),
		ContainersStatuses: sb.containerStatuses(),
		Timestamp:          time.Now().UnixNano(),
	}, nil
}

func (s *Server) ListPodSandbox(_ context.Context, req *runtimeapi.ListPodSandboxRequest) (*runtimeapi.ListPodSandboxResponse, error) {
	f := req.GetFilter()
	s.mu.Lock()
	defer s.mu.Unlock()
	match := func(sb *sandbox) bool {
		if f == nil {
			return true
		}
		if f.State != nil && sb.state != f.State.State {
			return false
		}
		return matchLabels(f.LabelSelector, sb.labels)
	}
	var out []*runtimeapi.PodSandbox
	if id := f.GetId(); id != "" {
		if sb := s.sandboxes[id]; sb != nil && match(sb) {
			out = append(out, sb.item())
		}
		return &runtimeapi.ListPodSandboxResponse{Items: out}, nil
	}
	candidates, indexed := s.byPod.sandboxesOf(f.GetLabelSelector())
	if !indexed {
		candidates = s.sandboxes
	}
	out = make([]*runtimeapi.PodSandbox, 0, len(candidates))
	for _, sb := range candidates {
		if match(sb) {
			out = append(out, sb.item())
		}
	}
	return &runtimeapi.ListPodSandboxResponse{Items: out}, nil
}
