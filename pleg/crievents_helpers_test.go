package pleg

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podline/podline/cri"
)

func quietLog() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// notes records notify calls.
type notes struct {
	mu  sync.Mutex
	n   map[types.UID]int
	all int
}

func newNotes() *notes { return &notes{n: map[types.UID]int{}} }

func (n *notes) notify(uid types.UID) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.n[uid]++
	n.all++
}

func (n *notes) count(uid types.UID) int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.n[uid]
}

func (n *notes) total() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.all
}

// runEvents runs s until the test ends; the returned stop cancels it and
// waits for Run to return (it may be called more than once).
func runEvents(t *testing.T, s *CRIEvents) (done <-chan struct{}, stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ch := make(chan struct{})
	go func() {
		defer close(ch)
		s.Run(ctx)
	}()
	stop = func() {
		cancel()
		select {
		case <-ch:
		case <-time.After(5 * time.Second):
			t.Error("Run did not return after its context ended")
		}
	}
	t.Cleanup(stop)
	return ch, stop
}

// waitFor polls cond until it holds or timeout passes.
func waitFor(t *testing.T, what string, timeout time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited %s for %s", timeout, what)
		}
		time.Sleep(time.Millisecond)
	}
}

func podLabels(uid string) map[string]string {
	return map[string]string{cri.LabelPodUID: uid, cri.LabelPodName: "pod-" + uid, cri.LabelPodNamespace: "ns"}
}

// Builders for events as containerd sends them: every event carries its
// sandbox's status and all that sandbox's container statuses.

func sbStatus(id, uid string, state runtimeapi.PodSandboxState) *runtimeapi.PodSandboxStatus {
	var labels map[string]string
	if uid != "" {
		labels = podLabels(uid)
	}
	return &runtimeapi.PodSandboxStatus{
		Id:        id,
		Metadata:  &runtimeapi.PodSandboxMetadata{Name: "pod-" + uid, Namespace: "ns", Uid: uid},
		State:     state,
		CreatedAt: 1_795_000_000_000_000_000,
		Network:   &runtimeapi.PodSandboxNetworkStatus{Ip: "10.88.0.7"},
		Labels:    labels,
	}
}

func ctrStatus(id, uid, name string, state runtimeapi.ContainerState, exitCode int32) *runtimeapi.ContainerStatus {
	var labels map[string]string
	if uid != "" {
		labels = podLabels(uid)
	}
	return &runtimeapi.ContainerStatus{
		Id:       id,
		Metadata: &runtimeapi.ContainerMetadata{Name: name},
		State:    state,
		ExitCode: exitCode,
		Labels:   labels,
	}
}

func event(typ runtimeapi.ContainerEventType, id string, at int64, sb *runtimeapi.PodSandboxStatus, ctrs ...*runtimeapi.ContainerStatus) *runtimeapi.ContainerEventResponse {
	return &runtimeapi.ContainerEventResponse{
		ContainerId: id, ContainerEventType: typ, CreatedAt: at,
		PodSandboxStatus: sb, ContainersStatuses: ctrs,
	}
}

const (
	evCreated = runtimeapi.ContainerEventType_CONTAINER_CREATED_EVENT
	evStarted = runtimeapi.ContainerEventType_CONTAINER_STARTED_EVENT
	evStopped = runtimeapi.ContainerEventType_CONTAINER_STOPPED_EVENT
	evDeleted = runtimeapi.ContainerEventType_CONTAINER_DELETED_EVENT

	sbReady    = runtimeapi.PodSandboxState_SANDBOX_READY
	sbNotReady = runtimeapi.PodSandboxState_SANDBOX_NOTREADY

	ctrCreated = runtimeapi.ContainerState_CONTAINER_CREATED
	ctrRunning = runtimeapi.ContainerState_CONTAINER_RUNNING
	ctrExited  = runtimeapi.ContainerState_CONTAINER_EXITED
	ctrUnknown = runtimeapi.ContainerState_CONTAINER_UNKNOWN
)

// A scripted runtime: each ContainerEvents call takes the next step.

type step struct {
	openErr error                                // the open fails
	events  []*runtimeapi.ContainerEventResponse // delivered in order
	hold    time.Duration                        // then the stream stays quiet this long
	end     error                                // then Recv fails with end; nil blocks until canceled
}

type scriptRuntime struct {
	mu    sync.Mutex
	steps []step
	opens int
	// reading is the number of the last stream (1 for the first open)
	// whose Recv was called: what Run does for a connection before it
	// reads it (resync, logging) is done.
	reading int
	log     *[]string // when set, each open appends "open"
}

func (r *scriptRuntime) ContainerEvents(ctx context.Context) (runtimeapi.RuntimeService_GetContainerEventsClient, error) {
	r.mu.Lock()
	i := r.opens
	r.opens++
	if r.log != nil {
		*r.log = append(*r.log, "open")
	}
	r.mu.Unlock()
	st := step{} // past the script: a stream that stays open
	if i < len(r.steps) {
		st = r.steps[i]
	}
	if st.openErr != nil {
		return nil, st.openErr
	}
	return &scriptStream{ctx: ctx, step: st, rt: r, n: i + 1}, nil
}

func (r *scriptRuntime) openCount() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.opens
}

// readingStream returns the number of the last stream read from (0: none).
func (r *scriptRuntime) readingStream() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.reading
}

type scriptStream struct {
	grpc.ClientStream // nil: CRIEvents only calls Recv
	ctx               context.Context
	step              step
	next              int
	rt                *scriptRuntime
	n                 int // the open that made it, from 1
}

func (s *scriptStream) Recv() (*runtimeapi.ContainerEventResponse, error) {
	s.rt.mu.Lock()
	s.rt.reading = max(s.rt.reading, s.n)
	s.rt.mu.Unlock()
	if s.next < len(s.step.events) {
		s.next++
		return s.step.events[s.next-1], nil
	}
	if s.step.hold > 0 {
		select {
		case <-time.After(s.step.hold):
		case <-s.ctx.Done():
			return nil, s.ctx.Err()
		}
	}
	if s.step.end != nil {
		return nil, s.step.end
	}
	<-s.ctx.Done()
	return nil, s.ctx.Err()
}
