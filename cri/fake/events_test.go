package fake

import (
	"context"
	"testing"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

func TestEventsStream(t *testing.T) {
	r := newRig(t, Options{})
	ctx, cancel := context.WithCancel(r.ctx)
	defer cancel()
	stream, err := r.rt.GetContainerEvents(ctx, &runtimeapi.GetEventsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	waitStreams(t, r.srv, 1)

	sb := r.runSandbox(t, sandboxConfig("pod", nil))
	c := r.createContainer(t, sb, containerConfig("app", nil))
	r.startContainer(t, c)
	if err := r.srv.ExitContainer(c, 2); err != nil {
		t.Fatal(err)
	}
	if _, err := r.rt.RemovePodSandbox(r.ctx, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: sb}); err != nil {
		t.Fatal(err)
	}

	type want struct {
		id  string
		typ runtimeapi.ContainerEventType
	}
	wants := []want{
		{sb, runtimeapi.ContainerEventType_CONTAINER_CREATED_EVENT},
		{sb, runtimeapi.ContainerEventType_CONTAINER_STARTED_EVENT},
		{c, runtimeapi.ContainerEventType_CONTAINER_CREATED_EVENT},
		{c, runtimeapi.ContainerEventType_CONTAINER_STARTED_EVENT},
		{c, runtimeapi.ContainerEventType_CONTAINER_STOPPED_EVENT},
		// RemovePodSandbox stops the sandbox before removing what it holds.
		{sb, runtimeapi.ContainerEventType_CONTAINER_STOPPED_EVENT},
		{c, runtimeapi.ContainerEventType_CONTAINER_DELETED_EVENT},
		{sb, runtimeapi.ContainerEventType_CONTAINER_DELETED_EVENT},
	}
	for i, w := range wants {
		ev, err := stream.Recv()
		if err != nil {
			t.Fatalf("event %d: %v", i, err)
		}
		if ev.ContainerId != w.id || ev.ContainerEventType != w.typ {
			t.Fatalf("event %d: got %s %s, want %s %s", i, ev.ContainerId, ev.ContainerEventType, w.id, w.typ)
		}
		if ev.CreatedAt == 0 {
			t.Fatalf("event %d has no timestamp", i)
		}
		last := i == len(wants)-1
		if last != (ev.PodSandboxStatus == nil) {
			t.Fatalf("event %d: sandbox status %v", i, ev.PodSandboxStatus)
		}
		if !last && ev.PodSandboxStatus.Id != sb {
			t.Fatalf("event %d: sandbox status of %s", i, ev.PodSandboxStatus.Id)
		}
		// Statuses reflect the state after the change.
		if w.id == c && w.typ == runtimeapi.ContainerEventType_CONTAINER_STOPPED_EVENT {
			if len(ev.ContainersStatuses) != 1 || ev.ContainersStatuses[0].ExitCode != 2 ||
				ev.ContainersStatuses[0].State != runtimeapi.ContainerState_CONTAINER_EXITED {
				t.Fatalf("stopped event statuses: %v", ev.ContainersStatuses)
			}
		}
		if w.id == c && w.typ == runtimeapi.ContainerEventType_CONTAINER_DELETED_EVENT && len(ev.ContainersStatuses) != 0 {
			t.Fatalf("deleted event still lists the container: %v", ev.ContainersStatuses)
		}
	}
	cancel()
	waitStreams(t, r.srv, 0)
}

func TestSlowEventConsumerDoesNotBlock(t *testing.T) {
	s := New(Options{EventBuffer: 3})
	defer s.Stop()
	// A subscriber that never reads.
	st := &eventStream{ch: make(chan *runtimeapi.ContainerEventResponse, s.opts.EventBuffer)}
	s.streams[st] = struct{}{}

	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 5 { // 2 events each
			_, err := s.RunPodSandbox(context.Background(), &runtimeapi.RunPodSandboxRequest{Config: sandboxConfig("p"+string(rune('0'+i)), nil)})
			if err != nil {
				t.Error(err)
			}
		}
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("runtime blocked on a consumer that does not read")
	}
	if got := len(st.ch); got != 3 {
		t.Fatalf("queued %d events, want 3", got)
	}
	if st.dropped.Load() != 7 || s.DroppedEvents() != 7 {
		t.Fatalf("dropped %d (server %d), want 7", st.dropped.Load(), s.DroppedEvents())
	}
}

func waitStreams(t *testing.T, s *Server, n int) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	for s.EventStreams() != n {
		if time.Now().After(deadline) {
			t.Fatalf("%d event streams open, want %d", s.EventStreams(), n)
		}
		time.Sleep(2 * time.Millisecond)
	}
}
