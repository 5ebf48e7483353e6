package pleg

import (
	"context"
	"fmt"
	"io"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podline/podline/cri"
	"github.com/podline/podline/cri/fake"
)

var errDown = fmt.Errorf("open: %w", cri.ErrUnavailable)

// recordSleeps makes s record its back-off delays instead of sleeping.
func recordSleeps(s *CRIEvents) func() []time.Duration {
	var mu sync.Mutex
	var delays []time.Duration
	s.sleep = func(ctx context.Context, d time.Duration) bool {
		mu.Lock()
		delays = append(delays, d)
		mu.Unlock()
		return ctx.Err() == nil
	}
	return func() []time.Duration {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(delays)
	}
}

func TestCRIEventsBackoff(t *testing.T) {
	const ms = time.Millisecond
	rt := &scriptRuntime{steps: []step{
		{openErr: errDown}, {openErr: errDown}, {openErr: errDown}, {openErr: errDown},
		{hold: 60 * ms, end: io.EOF}, // a healthy stream: the back-off starts over
		{openErr: errDown},
		{end: fmt.Errorf("recv: %w", cri.ErrUnavailable)}, // breaks at once: no reset
		// then a stream that stays open
	}}
	var resyncs atomic.Int32
	s := NewCRIEvents(rt, NewCache(), func(types.UID) {}, func(context.Context) error { resyncs.Add(1); return nil }, quietLog())
	s.minBackoff, s.maxBackoff, s.healthyAfter = 1*ms, 4*ms, 50*ms
	s.deadWithin = 30 * ms // the 60 ms stream lived
	delays := recordSleeps(s)
	reconnects := criEventsReconnects.Get()

	runEvents(t, s)
	waitFor(t, "the last stream", 2*time.Second, func() bool { return rt.openCount() == 8 && s.Connected() })
	want := []time.Duration{1 * ms, 2 * ms, 4 * ms, 4 * ms, 1 * ms, 2 * ms, 4 * ms}
	if got := delays(); !slices.Equal(got, want) {
		t.Fatalf("back-off delays %v, want %v", got, want)
	}
	// Resync once per opened stream, none for failed opens.
	if got := resyncs.Load(); got != 3 {
		t.Fatalf("%d resyncs for 3 opened streams", got)
	}
	if got := criEventsReconnects.Get() - reconnects; got != 7 {
		t.Fatalf("reconnects counter moved by %d, want 7", got)
	}
	if err := s.Healthy(); err != nil {
		t.Fatal(err)
	}
}

// Each connection is resynced once, after it opens and before its first
// event is applied, so the relist sees what the stream missed and the
// stream's events land on top.
func TestCRIEventsResyncBeforeEvents(t *testing.T) {
	var mu sync.Mutex
	var seq []string
	logf := func(format string, args ...any) {
		mu.Lock()
		seq = append(seq, fmt.Sprintf(format, args...))
		mu.Unlock()
	}
	ev := func(uid string) step {
		sb := sbStatus("sb-"+uid, uid, sbReady)
		return step{events: []*runtimeapi.ContainerEventResponse{event(evCreated, "sb-"+uid, t0, sb)}, end: io.EOF}
	}
	rt := &scriptRuntime{steps: []step{ev("a"), ev("b"), ev("c")}}
	s := NewCRIEvents(rt, NewCache(),
		func(uid types.UID) { logf("notify %s", uid) },
		func(context.Context) error { logf("resync"); return nil }, quietLog())
	s.minBackoff = time.Millisecond
	runEvents(t, s)
	waitFor(t, "the fourth stream", 2*time.Second, func() bool { return rt.openCount() == 4 && s.Connected() })
	mu.Lock()
	defer mu.Unlock()
	want := []string{"resync", "notify a", "resync", "notify b", "resync", "notify c", "resync"}
	if !slices.Equal(seq, want) {
		t.Fatalf("sequence %q, want %q", seq, want)
	}
}

// A failed resync leaves a gap, so the connection is dropped and retried
// and does not count as connected.
func TestCRIEventsResyncFailureReconnects(t *testing.T) {
	rt := &scriptRuntime{}
	var resyncs atomic.Int32
	s := NewCRIEvents(rt, NewCache(), func(types.UID) {}, func(context.Context) error {
		if resyncs.Add(1) < 3 {
			return fmt.Errorf("list: %w", cri.ErrUnavailable)
		}
		return nil
	}, quietLog())
	s.minBackoff = time.Millisecond
	runEvents(t, s)
	waitFor(t, "a connection", 2*time.Second, s.Connected)
	if rt.openCount() != 3 || resyncs.Load() != 3 {
		t.Fatalf("%d opens, %d resyncs; want 3 each", rt.openCount(), resyncs.Load())
	}
}

// countingRuntime counts stream opens and records when each was tried.
type countingRuntime struct {
	EventRuntime
	mu       sync.Mutex
	attempts []time.Time
	opened   int
}

func (r *countingRuntime) ContainerEvents(ctx context.Context) (runtimeapi.RuntimeService_GetContainerEventsClient, error) {
	r.mu.Lock()
	r.attempts = append(r.attempts, time.Now())
	r.mu.Unlock()
	st, err := r.EventRuntime.ContainerEvents(ctx)
	if err == nil {
		r.mu.Lock()
		r.opened++
		r.mu.Unlock()
	}
	return st, err
}

func (r *countingRuntime) counts() (attempts []time.Time, opened int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.attempts), r.opened
}

func TestCRIEventsReconnectToRestartedRuntime(t *testing.T) {
	sock, srv := fake.Listen(t, fake.Options{})
	rt := dialFake(t, sock)
	counting := &countingRuntime{EventRuntime: rt}
	cache := NewCache()
	var resyncs atomic.Int32
	s := NewCRIEvents(counting, cache, func(types.UID) {}, func(context.Context) error { resyncs.Add(1); return nil }, quietLog())
	s.minBackoff = 10 * time.Millisecond
	runEvents(t, s)
	waitFor(t, "the event stream", 2*time.Second, func() bool { return s.Connected() && srv.EventStreams() == 1 })

	before, _ := counting.counts()
	srv.Stop() // the runtime dies
	waitFor(t, "the break", 2*time.Second, func() bool { return !s.Connected() })
	if s.Healthy() == nil {
		t.Fatal("healthy while the runtime is down")
	}
	time.Sleep(400 * time.Millisecond)
	down, _ := counting.counts()
	down = down[len(before):]

	srv2 := fake.New(fake.Options{})
	stop, err := srv2.Start(sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	waitFor(t, "the reconnection", 5*time.Second, func() bool { return s.Connected() && srv2.EventStreams() == 1 })

	// While down: one attempt, whose open waits for the runtime to come
	// back (cri.Client opens with WaitForReady), not a spin nor a
	// back-off schedule that would reconnect only at its next step.
	if len(down) != 1 {
		t.Fatalf("%d attempts in 400 ms down; want 1 waiting for the runtime", len(down))
	}
	_, opened := counting.counts()
	if got := resyncs.Load(); opened != 2 || got != 2 {
		t.Fatalf("%d streams opened, %d resyncs; want 2 each", opened, got)
	}

	// Events flow from the new runtime.
	cfg := sandboxConfig("u2", true)
	if _, err := rt.RunPodSandbox(context.Background(), cfg, ""); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the new runtime's pod", time.Second, func() bool { return cache.Get("u2") != nil })
}
