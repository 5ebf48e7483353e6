package fake

import (
	"context"
	"encoding/json"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// RuntimeName is what Version reports, so a test can tell it reached the
// fake and not a real runtime.
const RuntimeName = "podline-fake"

func (s *Server) Version(context.Context, *runtimeapi.VersionRequest) (*runtimeapi.VersionResponse, error) {
	return &runtimeapi.VersionResponse{
		Version:           "0.1.0",
		RuntimeName:       RuntimeName,
		RuntimeVersion:    "0.1.0",
		RuntimeApiVersion: "v1",
	}, nil
}

// Status reports a runtime whose network is up, with one runtime handler
// (the default, "") that supports none of the optional features: pods
// asking for user namespaces or recursive read-only mounts are refused by
// the client, as on a runtime built without them.
func (s *Server) Status(_ context.Context, req *runtimeapi.StatusRequest) (*runtimeapi.StatusResponse, error) {
	resp := &runtimeapi.StatusResponse{
		Status: &runtimeapi.RuntimeStatus{Conditions: []*runtimeapi.RuntimeCondition{
			{Type: runtimeapi.RuntimeReady, Status: true},
			{Type: runtimeapi.NetworkReady, Status: true},
		}},
		RuntimeHandlers: []*runtimeapi.RuntimeHandler{{Name: "", Features: &runtimeapi.RuntimeHandlerFeatures{}}},
		Features:        &runtimeapi.RuntimeFeatures{},
	}
	if req.GetVerbose() {
		cfg, _ := json.Marshal(map[string]any{"runtime": RuntimeName, "fsMountpoint": s.opts.FsMountpoint, "logFiles": s.opts.LogFiles})
		resp.Info = map[string]string{"config": string(cfg)}
	}
	return resp, nil
}

// RuntimeConfig reports the cgroupfs driver: the project's runtimes run runc
// with SystemdCgroup = false, and a kubelet takes its cgroup driver from
// here.
func (s *Server) RuntimeConfig(context.Context, *runtimeapi.RuntimeConfigRequest) (*runtimeapi.RuntimeConfigResponse, error) {
	return &runtimeapi.RuntimeConfigResponse{
		Linux: &runtimeapi.LinuxRuntimeConfiguration{CgroupDriver: runtimeapi.CgroupDriver_CGROUPFS},
	}, nil
}

// UpdateRuntimeConfig accepts and ignores the pod CIDR, as the fake's
// addresses always come from Options.PodSubnet.
func (s *Server) UpdateRuntimeConfig(context.Context, *runtimeapi.UpdateRuntimeConfigRequest) (*runtimeapi.UpdateRuntimeConfigResponse, error) {
	return &runtimeapi.UpdateRuntimeConfigResponse{}, nil
}

// ExecSync runs nothing: Options.Exec answers, or the default that echoes
// for "echo", exits 1 for "false" and 0 for anything else.
func (s *Server) ExecSync(_ context.Context, req *runtimeapi.ExecSyncRequest) (*runtimeapi.ExecSyncResponse, error) {
	if len(req.Cmd) == 0 {
		return nil, status.Error(codes.InvalidArgument, "exec: empty command")
	}
	s.mu.Lock()
	c := s.containers[req.ContainerId]
	var state runtimeapi.ContainerState
	if c != nil {
		state = c.state
	}
	s.mu.Unlock()
	if c == nil {
		return nil, status.Errorf(codes.NotFound, "container %q not found", req.ContainerId)
	}
	if state != runtimeapi.ContainerState_CONTAINER_RUNNING {
		return nil, status.Errorf(codes.FailedPrecondition, "container %q is in state %s, not running", req.ContainerId, state)
	}
	if s.opts.Exec != nil {
		stdout, stderr, code := s.opts.Exec(req.ContainerId, req.Cmd)
		return &runtimeapi.ExecSyncResponse{Stdout: stdout, Stderr: stderr, ExitCode: code}, nil
	}
	switch req.Cmd[0] {
	case "echo":
		return &runtimeapi.ExecSyncResponse{Stdout: []byte(strings.Join(req.Cmd[1:], " ") + "\n")}, nil
	case "false":
		return &runtimeapi.ExecSyncResponse{ExitCode: 1}, nil
	}
	return &runtimeapi.ExecSyncResponse{}, nil
}
