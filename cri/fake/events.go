package fake

import (
	"sync/atomic"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// eventStream is one GetContainerEvents subscriber. Its queue is bounded: a
// consumer that stops reading loses events (counted) instead of stalling
// the runtime, which is what containerd does too.
type eventStream struct {
	ch      chan *runtimeapi.ContainerEventResponse
	dropped atomic.Int64
}

// GetContainerEvents streams container and sandbox lifecycle events until
// the client goes away or the server stops.
func (s *Server) GetContainerEvents(_ *runtimeapi.GetEventsRequest, srv runtimeapi.RuntimeService_GetContainerEventsServer) error {
	switch s.opts.Events {
	case EventsEnd:
		return nil
	case EventsUnimplemented:
		return status.Error(codes.Unimplemented, "fake: no container event stream (--events=unimplemented)")
	}
	st := &eventStream{ch: make(chan *runtimeapi.ContainerEventResponse, s.opts.EventBuffer)}
	s.mu.Lock()
	s.streams[st] = struct{}{}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.streams, st)
		s.mu.Unlock()
	}()

	ctx := srv.Context()
	for {
		select {
		case ev := <-st.ch:
			if err := srv.Send(ev); err != nil {
				return err
			}
		case <-ctx.Done():
			return nil
		}
	}
}

// emitLocked queues an event for every stream. It runs under s.mu, so each
// stream sees events in the order the state changed. As in containerd, a
// sandbox's own events carry its id as the container id, and every event
// carries the sandbox status (nil once removed) and all its containers'
// statuses.
func (s *Server) emitLocked(containerID string, sb *sandbox, typ runtimeapi.ContainerEventType) {
	if len(s.streams) == 0 {
		return
	}
	ev := &runtimeapi.ContainerEventResponse{
		ContainerId:        containerID,
		ContainerEventType: typ,
		CreatedAt:          time.Now().UnixNano(),
	}
	if sb != nil {
		ev.PodSandboxStatus = sb.status()
		ev.ContainersStatuses = sb.containerStatuses()
	}
	// Streams share ev: it is never modified after this point and gRPC
	// only reads it while marshalling.
	for st := range s.streams {
		select {
		case st.ch <- ev:
		default:
			st.dropped.Add(1)
			s.dropped.Add(1)
		}
	}
}
