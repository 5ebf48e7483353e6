package fake

import (
	"errors"
	"fmt"
	"strconv"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// behaviour is what a container's environment asks of the fake process.
type behaviour struct {
	exitAfter    time.Duration // < 0: runs until stopped
	exitCode     int32
	stopExitCode int32
}

// parseEnv reads FAKE_EXIT_AFTER, FAKE_EXIT_CODE and FAKE_STOP_EXIT_CODE.
// Bad values fail CreateContainer so a typo in a test shows at once.
func parseEnv(envs []*runtimeapi.KeyValue) (behaviour, error) {
	b := behaviour{exitAfter: -1, stopExitCode: 143}
	for _, kv := range envs {
		v := string(kv.Value)
		var err error
		switch kv.Key {
		case "FAKE_EXIT_AFTER":
			b.exitAfter, err = time.ParseDuration(v)
			if err == nil && b.exitAfter < 0 {
				err = fmt.Errorf("negative")
			}
		case "FAKE_EXIT_CODE":
			b.exitCode, err = parseCode(v)
		case "FAKE_STOP_EXIT_CODE":
			b.stopExitCode, err = parseCode(v)
		}
		if err != nil {
			return b, fmt.Errorf("env %s=%q: %v", kv.Key, v, err)
		}
	}
	return b, nil
}

func parseCode(v string) (int32, error) {
	n, err := strconv.ParseInt(v, 10, 32)
	return int32(n), err
}

// armExitLocked schedules the self-exit of a just-started container. A
// timer costs no goroutine while it waits.
func (s *Server) armExitLocked(c *container) {
	if c.exitAfter < 0 {
		return
	}
	c.timer = time.AfterFunc(c.exitAfter, func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		// The container may have been stopped or removed meanwhile.
		if s.containers[c.id] == c && c.state == runtimeapi.ContainerState_CONTAINER_RUNNING {
			s.exitLocked(c, c.exitCode)
		}
	})
}

// exitLocked moves a running container to EXITED with code.
func (s *Server) exitLocked(c *container, code int32) {
	c.stopTimer()
	c.setState(runtimeapi.ContainerState_CONTAINER_EXITED)
	c.finishedAt = time.Now().UnixNano()
	c.exited = code
	c.reason = "Completed"
	if code != 0 {
		c.reason = "Error"
	}
	s.emitLocked(c.id, s.sandboxes[c.sandboxID], runtimeapi.ContainerEventType_CONTAINER_STOPPED_EVENT)
}

// Errors of ExitContainer, for errors.Is.
var (
	ErrNoContainer = errors.New("no such container")
	ErrNotRunning  = errors.New("container is not running")
)

// ExitContainer makes a running container exit with code now, as if its
// process ended.
func (s *Server) ExitContainer(id string, code int32) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.containers[id]
	if c == nil {
		return fmt.Errorf("exit container %s: %w", id, ErrNoContainer)
	}
	if c.state != runtimeapi.ContainerState_CONTAINER_RUNNING {
		return fmt.Errorf("exit container %s (%s): %w", id, c.state, ErrNotRunning)
	}
	s.exitLocked(c, code)
	return nil
}
