package fake

import (
	"context"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// Resources are recorded, not enforced: there are no cgroups. A container
// reports the resources it was last given in its status, which is what a
// kubelet compares against the pod spec to decide whether to resize.

// UpdateContainerResources replaces the Linux resources of a created or
// running container. An exited container refuses, as in containerd.
func (s *Server) UpdateContainerResources(_ context.Context, req *runtimeapi.UpdateContainerResourcesRequest) (*runtimeapi.UpdateContainerResourcesResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.containers[req.ContainerId]
	if c == nil {
		return nil, status.Errorf(codes.NotFound, "container %q not found", req.ContainerId)
	}
	if c.state == runtimeapi.ContainerState_CONTAINER_EXITED {
		return nil, status.Errorf(codes.FailedPrecondition, "container %q has exited", c.id)
	}
	if req.Linux != nil {
		c.resources = req.Linux
	}
	return &runtimeapi.UpdateContainerResourcesResponse{}, nil
}

// UpdatePodSandboxResources accepts pod-level resources for a known
// sandbox; the fake has no pod cgroup to apply them to.
func (s *Server) UpdatePodSandboxResources(_ context.Context, req *runtimeapi.UpdatePodSandboxResourcesRequest) (*runtimeapi.UpdatePodSandboxResourcesResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sandboxes[req.PodSandboxId] == nil {
		return nil, status.Errorf(codes.NotFound, "sandbox %q not found", req.PodSandboxId)
	}
	return &runtimeapi.UpdatePodSandboxResourcesResponse{}, nil
}
