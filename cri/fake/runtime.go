package fake

import (
	"context"
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

func (s *Server) Status(context.Context, *runtimeapi.StatusRequest) (*runtimeapi.StatusResponse, error) {
	return &runtimeapi.StatusResponse{Status: &runtimeapi.RuntimeStatus{Conditions: []*runtimeapi.RuntimeCondition{
		{Type: runtimeapi.RuntimeReady, Status: true},
		{Type: runtimeapi.NetworkReady, Status: true},
	}}}, nil
}

// UpdateRuntimeConfig accepts and ignores the pod CIDR, as the fake's
// addresses always come from 10.88.0.0/16.
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
