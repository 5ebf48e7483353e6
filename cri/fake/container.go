package fake

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

func (s *Server) CreateContainer(_ context.Context, req *runtimeapi.CreateContainerRequest) (*runtimeapi.CreateContainerResponse, error) {
	cfg := req.GetConfig()
	md := cfg.GetMetadata()
	if md == nil {
		return nil, status.Error(codes.InvalidArgument, "container config must include metadata")
	}
	behaviour, err := parseEnv(cfg.Envs)
	if err != nil {
		return nil, status.Error(codes.InvalidArgument, err.Error())
	}
	c := &container{
		id:           newID(),
		sandboxID:    req.PodSandboxId,
		name:         md.Name,
		attempt:      md.Attempt,
		image:        cfg.GetImage().GetImage(),
		userImage:    cfg.GetImage().GetUserSpecifiedImage(),
		resources:    cfg.GetLinux().GetResources(),
		labels:       cfg.Labels,
		annotations:  cfg.Annotations,
		nameKey:      fmt.Sprintf("%s/%s_%d", req.PodSandboxId, md.Name, md.Attempt),
		exitAfter:    behaviour.exitAfter,
		exitCode:     behaviour.exitCode,
		stopExitCode: behaviour.stopExitCode,
		state:        runtimeapi.ContainerState_CONTAINER_CREATED,
	}
	h := hashOf(c.id)
	c.cpuMilli = 5 + h%96              // 5–100 millicores
	c.memBytes = (8 + (h>>8)%57) << 20 // 8–64 MiB

	s.mu.Lock()
	defer s.mu.Unlock()
	sb := s.sandboxes[req.PodSandboxId]
	if sb == nil {
		return nil, status.Errorf(codes.NotFound, "sandbox %q not found", req.PodSandboxId)
	}
	if sb.state != runtimeapi.PodSandboxState_SANDBOX_READY {
		return nil, status.Errorf(codes.FailedPrecondition, "sandbox %q is not ready", sb.id)
	}
	if owner, taken := s.names[c.nameKey]; taken {
		return nil, status.Errorf(codes.AlreadyExists, "container name %q is reserved for %s", c.nameKey, owner)
	}
	if sb.logDir != "" && cfg.LogPath != "" {
		c.logPath = filepath.Join(sb.logDir, cfg.LogPath)
	}
	// Clients create from the image id they pulled; like containerd, the
	// status names the image by its tag. An image never pulled still gets
	// the id it would have.
	if im := s.findImageLocked(c.image); im != nil {
		c.image, c.imageRef = im.name, im.id
	} else {
		c.imageRef = imageID(c.image)
	}
	c.createdAt = time.Now().UnixNano()
	s.containers[c.id] = c
	sb.containers[c.id] = c
	s.names[c.nameKey] = c.id
	s.byPod.addContainer(c)
	s.emitLocked(c.id, sb, runtimeapi.ContainerEventType_CONTAINER_CREATED_EVENT)
	return &runtimeapi.CreateContainerResponse{ContainerId: c.id}, nil
}

func (s *Server) StartContainer(_ context.Context, req *runtimeapi.StartContainerRequest) (*runtimeapi.StartContainerResponse, error) {
	if s.opts.LogFiles {
		if err := s.createLogFile(s.logPathOf(req.ContainerId)); err != nil {
			return nil, status.Errorf(codes.Unknown, "start container %s: %v", req.ContainerId, err)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.containers[req.ContainerId]
	if c == nil {
		return nil, status.Errorf(codes.NotFound, "container %q not found", req.ContainerId)
	}
	if c.state != runtimeapi.ContainerState_CONTAINER_CREATED {
		return nil, status.Errorf(codes.FailedPrecondition, "container %q is in state %s, not CONTAINER_CREATED", c.id, c.state)
	}
	sb := s.sandboxes[c.sandboxID]
	if sb.state != runtimeapi.PodSandboxState_SANDBOX_READY {
		return nil, status.Errorf(codes.FailedPrecondition, "sandbox %q of container %q is not ready", sb.id, c.id)
	}
	c.setState(runtimeapi.ContainerState_CONTAINER_RUNNING)
	c.startedAt = time.Now().UnixNano()
	s.emitLocked(c.id, sb, runtimeapi.ContainerEventType_CONTAINER_STARTED_EVENT)
	s.armExitLocked(c)
	return &runtimeapi.StartContainerResponse{}, nil
}

// StopContainer stops a running container at once, whatever the grace
// period. Like containerd it leaves created and exited containers alone.
func (s *Server) StopContainer(_ context.Context, req *runtimeapi.StopContainerRequest) (*runtimeapi.StopContainerResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.containers[req.ContainerId]
	if c == nil {
		return nil, status.Errorf(codes.NotFound, "container %q not found", req.ContainerId)
	}
	if c.state == runtimeapi.ContainerState_CONTAINER_RUNNING {
		s.exitLocked(c, c.stopExitCode)
	}
	return &runtimeapi.StopContainerResponse{}, nil
}

// RemoveContainer kills the container if it runs and removes it. An
// unknown container is not an error.
func (s *Server) RemoveContainer(_ context.Context, req *runtimeapi.RemoveContainerRequest) (*runtimeapi.RemoveContainerResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c := s.containers[req.ContainerId]; c != nil {
		s.removeContainerLocked(c, s.sandboxes[c.sandboxID])
	}
	return &runtimeapi.RemoveContainerResponse{}, nil
}

func (s *Server) removeContainerLocked(c *container, sb *sandbox) {
	if c.state == runtimeapi.ContainerState_CONTAINER_RUNNING {
		s.exitLocked(c, c.stopExitCode)
	}
	c.stopTimer()
	delete(s.containers, c.id)
	delete(sb.containers, c.id)
	delete(s.names, c.nameKey)
	s.byPod.removeContainer(c)
	s.emitLocked(c.id, sb, runtimeapi.ContainerEventType_CONTAINER_DELETED_EVENT)
}

func (s *Server) ContainerStatus(_ context.Context, req *runtimeapi.ContainerStatusRequest) (*runtimeapi.ContainerStatusResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.containers[req.ContainerId]
	if c == nil {
		return nil, status.Errorf(codes.NotFound, "container %q not found", req.ContainerId)
	}
	return &runtimeapi.ContainerStatusResponse{Status: c.status()}, nil
}

func (s *Server) ListContainers(_ context.Context, req *runtimeapi.ListContainersRequest) (*runtimeapi.ListContainersResponse, error) {
	f := req.GetFilter()
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*runtimeapi.Container
	s.eachContainerLocked(f.GetId(), f.GetPodSandboxId(), f.GetLabelSelector(), func(c *container) {
		if f.GetState() != nil && c.state != f.State.State {
			return
		}
		out = append(out, c.item())
	})
	return &runtimeapi.ListContainersResponse{Containers: out}, nil
}

// eachContainerLocked calls fn for the containers matching the filters
// shared by container lists and stats, visiting only the sandbox's or the
// pod's containers when the filter names one.
func (s *Server) eachContainerLocked(id, sandboxID string, selector map[string]string, fn func(*container)) {
	visit := func(c *container) {
		if sandboxID != "" && c.sandboxID != sandboxID {
			return
		}
		if matchLabels(selector, c.labels) {
			fn(c)
		}
	}
	switch {
	case id != "":
		if c := s.containers[id]; c != nil {
			visit(c)
		}
	case sandboxID != "":
		if sb := s.sandboxes[sandboxID]; sb != nil {
			for _, c := range sb.containers {
				visit(c)
			}
		}
	default:
		candidates, indexed := s.byPod.containersOf(selector)
		if !indexed {
			candidates = s.containers
		}
		for _, c := range candidates {
			visit(c)
		}
	}
}
