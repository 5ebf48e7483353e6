package fake

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// Container logs: the fake's processes write nothing, but with
// Options.LogFiles the log file exists from StartContainer on, as
// containerd opens it when it starts the container. A kubelet checks it
// every 10 s per container to rotate it; a missing file costs it a
// ReopenContainerLog call and an error line per container each time, a
// cost no real runtime's client pays.

// ReopenContainerLog recreates the log file of a running container, as a
// runtime's log writer reopens it after rotation.
func (s *Server) ReopenContainerLog(_ context.Context, req *runtimeapi.ReopenContainerLogRequest) (*runtimeapi.ReopenContainerLogResponse, error) {
	s.mu.Lock()
	c := s.containers[req.ContainerId]
	var state runtimeapi.ContainerState
	var path string
	if c != nil {
		state, path = c.state, c.logPath
	}
	s.mu.Unlock()
	if c == nil {
		return nil, status.Errorf(codes.NotFound, "container %q not found", req.ContainerId)
	}
	if state != runtimeapi.ContainerState_CONTAINER_RUNNING {
		return nil, status.Errorf(codes.FailedPrecondition, "container %q is in state %s, not running", req.ContainerId, state)
	}
	if err := s.createLogFile(path); err != nil {
		return nil, status.Errorf(codes.Unknown, "reopen log of container %s: %v", req.ContainerId, err)
	}
	return &runtimeapi.ReopenContainerLogResponse{}, nil
}

// createLogFile makes path (and its directory) exist when Options.LogFiles
// asks for it. The directory's parent, the pod's log directory, is the
// agent's: when it is gone the call fails rather than bring it back. It
// runs without Server.mu: it is file I/O.
func (s *Server) createLogFile(path string) error {
	if !s.opts.LogFiles || path == "" {
		return nil
	}
	if err := os.Mkdir(filepath.Dir(path), 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("create log dir: %w", err)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o640)
	if err != nil {
		return fmt.Errorf("create log file: %w", err)
	}
	return f.Close()
}

// logPathOf returns the log path of container id, "" when it has none or
// does not exist (the caller reports that under the lock it takes next).
func (s *Server) logPathOf(id string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c := s.containers[id]; c != nil {
		return c.logPath
	}
	return ""
}
