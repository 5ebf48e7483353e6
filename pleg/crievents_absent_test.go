package pleg

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podline/podline/cri"
	"github.com/podline/podline/cri/fake"
	"github.com/podline/podline/internal/podtest"
)

// The log lines an operator sees about the stream's absence.
const (
	msgDeadStream  = "the runtime's container event stream ends as soon as it opens; treating it as absent: pod state comes from the kernel's events and a relist in its stead"
	msgNoStream    = "the runtime has no container event stream; pod state comes from the kernel's events and a relist in its stead"
	msgStreamWorks = "the runtime's container event stream works again"
)

// sleepLog records the waits of a CRIEvents without waiting, and what the
// absence gauge and Healthy said at each; after limit waits it blocks
// until the test ends, so Run cannot spin past the script.
type sleepLog struct {
	mu      sync.Mutex
	delays  []time.Duration
	gauge   []float64
	healthy []error
}

func logSleeps(s *CRIEvents, limit int) *sleepLog {
	l := &sleepLog{}
	s.sleep = func(ctx context.Context, d time.Duration) bool {
		l.mu.Lock()
		n := len(l.delays)
		if n < limit {
			l.delays = append(l.delays, d)
			l.gauge = append(l.gauge, criEventsAbsent.Get())
			l.healthy = append(l.healthy, s.Healthy())
		}
		l.mu.Unlock()
		if n >= limit {
			<-ctx.Done()
		}
		return ctx.Err() == nil
	}
	return l
}

func (l *sleepLog) get() (delays []time.Duration, gauge []float64, healthy []error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.delays), slices.Clone(l.gauge), slices.Clone(l.healthy)
}

// repeat returns n copies of d.
func repeat(d time.Duration, n int) []time.Duration {
	out := make([]time.Duration, n)
	for i := range out {
		out[i] = d
	}
	return out
}

// A runtime whose stream ends as soon as it opens (k8s.io/cri-client's
// fake runtime) used to cost a reconnection, and the relist after it,
// every 10 s for as long as podline ran, and a warning each time. After
// three such streams in a row it counts as having none: one warning, the
// gauge set, a relist every minute in the stream's stead, and the stream
// tried again after 5 minutes, then 10, 20, and every 30. When the stream
// works again, that is said once too and the gauge drops.
func TestCRIEventsStreamEndingAtOnceIsAbsent(t *testing.T) {
	const ms = time.Millisecond
	dead := step{end: io.EOF}
	rt := &scriptRuntime{steps: []step{dead, dead, dead, dead, dead, dead}} // then a stream that stays open
	var resyncs atomic.Int32
	var out podtest.LogBuffer
	log := slog.New(slog.NewTextHandler(&out, &slog.HandlerOptions{Level: slog.LevelInfo}))
	s := NewCRIEvents(rt, NewCache(), func(types.UID) {}, func(context.Context) error { resyncs.Add(1); return nil }, log)
	s.deadWithin = 50 * ms
	sleeps := logSleeps(s, 1000)
	reconnects := criEventsReconnects.Get()

	runEvents(t, s)
	waitFor(t, "the stream that works", 5*time.Second, func() bool { return rt.openCount() == 7 && s.Connected() })
	// proven() publishes the recovery before it logs it: wait for both.
	waitFor(t, "the stream to prove itself", 5*time.Second, func() bool {
		return criEventsAbsent.Get() == 0 && s.Healthy() == nil && len(out.Lines(msgStreamWorks)) > 0
	})

	delays, gauge, healthy := sleeps.get()
	want := []time.Duration{100 * ms, 200 * ms} // the usual back-off between the first three
	for _, minutes := range []int{5, 10, 20, 30} {
		want = append(want, repeat(time.Minute, minutes)...)
	}
	if !slices.Equal(delays, want) {
		t.Fatalf("waits %v,\nwant %v", delays, want)
	}
	for i, d := range delays {
		if d == time.Minute && (gauge[i] != 1 || !errors.Is(healthy[i], ErrEventsUnsupported)) {
			t.Fatalf("wait %d, while absent: gauge %v, Healthy() = %v", i, gauge[i], healthy[i])
		}
	}
	// A relist each minute but the last of each wait, whose retry
	// resyncs anyway, and one per stream opened.
	if got, want := resyncs.Load(), int32(4+9+19+29+7); got != want {
		t.Fatalf("%d resyncs, want %d", got, want)
	}
	if got := criEventsReconnects.Get() - reconnects; got != 6 {
		t.Fatalf("reconnects counter moved by %d, want 6", got)
	}
	if got := out.Lines(msgDeadStream); len(got) != 1 || !strings.Contains(got[0], "level=WARN") {
		t.Fatalf("absence said %d times, want once at WARN:\n%s", len(got), out.String())
	}
	if got := out.Lines(msgStreamWorks); len(got) != 1 {
		t.Fatalf("recovery said %d times, want once:\n%s", len(got), out.String())
	}
	if got := out.Lines("container event stream broke; reconnecting"); len(got) != 0 {
		t.Fatalf("streams that never lived logged as breaks:\n%s", strings.Join(got, "\n"))
	}
}

// Only streams that end at once, with no event, in a row count: a stream
// that lived, or delivered, starts the count over, and failed opens (the
// runtime unreachable) say nothing about the stream.
func TestCRIEventsOnlyStreamsEndingAtOnceInARowCount(t *testing.T) {
	const ms = time.Millisecond
	dead := step{end: io.EOF}
	ev := event(evCreated, "sb-a", t0, sbStatus("sb-a", "a", sbReady))
	rt := &scriptRuntime{steps: []step{
		dead, dead, {hold: 100 * ms, end: io.EOF}, // lived
		dead, dead, {events: []*runtimeapi.ContainerEventResponse{ev}, end: io.EOF}, // delivered
		dead, {openErr: errDown}, {openErr: errDown}, dead, // opens that failed
	}}
	s := NewCRIEvents(rt, NewCache(), func(types.UID) {}, func(context.Context) error { return nil }, quietLog())
	s.minBackoff, s.maxBackoff, s.deadWithin = ms, ms, 50*ms
	sleeps := logSleeps(s, 1000)
	runEvents(t, s)
	waitFor(t, "the last stream", 5*time.Second, func() bool { return rt.openCount() == 11 && s.Connected() })
	delays, _, _ := sleeps.get()
	if slices.Contains(delays, time.Minute) || criEventsAbsent.Get() != 0 {
		t.Fatalf("counted absent: waits %v", delays)
	}

	// One more that ends at once after the failed opens makes three.
	rt = &scriptRuntime{steps: []step{dead, {openErr: errDown}, dead, {openErr: errDown}, dead}}
	s = NewCRIEvents(rt, NewCache(), func(types.UID) {}, func(context.Context) error { return nil }, quietLog())
	s.minBackoff, s.maxBackoff, s.deadWithin = ms, ms, 50*ms
	sleeps = logSleeps(s, 5)
	runEvents(t, s)
	waitFor(t, "the absence", 5*time.Second, func() bool { d, _, _ := sleeps.get(); return slices.Contains(d, time.Minute) })
	if rt.openCount() != 5 {
		t.Fatalf("%d opens before the absence, want 5", rt.openCount())
	}
}

// A runtime without the call (containerd 1.6) is absent at once: Run used
// to return and never try again, so a runtime upgraded under podline was
// never followed. Now it relists in the stream's stead and tries again
// rarely, saying so once.
func TestCRIEventsUnimplementedIsAbsentAndTriedAgain(t *testing.T) {
	sock, srv := fake.Listen(t, fake.Options{})
	srv.Inject("GetContainerEvents", codes.Unimplemented, 2)
	var resyncs atomic.Int32
	var out podtest.LogBuffer
	log := slog.New(slog.NewTextHandler(&out, &slog.HandlerOptions{Level: slog.LevelInfo}))
	s := NewCRIEvents(dialFake(t, sock), NewCache(), func(types.UID) {}, func(context.Context) error { resyncs.Add(1); return nil }, log)
	s.deadWithin = 20 * time.Millisecond
	sleeps := logSleeps(s, 1000)
	runEvents(t, s)
	waitFor(t, "the stream on the third try", 5*time.Second, func() bool {
		return srv.EventStreams() == 1 && s.Healthy() == nil && criEventsAbsent.Get() == 0
	})
	delays, gauge, healthy := sleeps.get()
	want := append(repeat(time.Minute, 5), repeat(time.Minute, 10)...)
	if !slices.Equal(delays, want) {
		t.Fatalf("waits %v, want 5 then 10 minutes of relists", delays)
	}
	if gauge[0] != 1 || !errors.Is(healthy[0], ErrEventsUnsupported) {
		t.Fatalf("while absent: gauge %v, Healthy() = %v", gauge[0], healthy[0])
	}
	if got := srv.Calls("GetContainerEvents"); got != 3 {
		t.Fatalf("GetContainerEvents called %d times, want 3", got)
	}
	if got := resyncs.Load(); got != 3+4+9 {
		t.Fatalf("%d resyncs, want one per stream opened and one a minute between", got)
	}
	if got := out.Lines(msgNoStream); len(got) != 1 {
		t.Fatalf("absence said %d times, want once:\n%s", len(got), out.String())
	}

	// Another client may refuse at the open already.
	rt := &scriptRuntime{steps: []step{{openErr: fmt.Errorf("open: %w", cri.ErrUnimplemented)}}}
	s = NewCRIEvents(rt, NewCache(), func(types.UID) {}, nil, quietLog())
	sleeps = logSleeps(s, 1)
	runEvents(t, s)
	waitFor(t, "the absence", 5*time.Second, func() bool { d, _, _ := sleeps.get(); return len(d) == 1 })
	if d, _, _ := sleeps.get(); rt.openCount() != 1 || d[0] != time.Minute || !errors.Is(s.Healthy(), ErrEventsUnsupported) {
		t.Fatalf("%d opens, waits %v, Healthy() = %v", rt.openCount(), d, s.Healthy())
	}
}

// The period follows StandIn while Run runs: a kernel source that starts
// (the cgroup notifier, once an inotify instance is free) or stops moves
// the relist in the stream's stead between every minute and every second
// from the next wait on.
func TestCRIEventsStandInChangesWhileAbsent(t *testing.T) {
	rt := &scriptRuntime{steps: []step{{openErr: fmt.Errorf("open: %w", cri.ErrUnimplemented)}}}
	s := NewCRIEvents(rt, NewCache(), func(types.UID) {}, nil, quietLog())
	s.StandIn(StandInPeriod(false))
	// A wait stays under way until the test ends it, so that the period
	// changes during a wait, not between two: Run reads the period as a
	// wait begins, and a change racing with that read made the wait after
	// it either period, which could use up the stand-in's five minutes.
	begun, end := make(chan time.Duration), make(chan struct{})
	s.sleep = func(ctx context.Context, d time.Duration) bool {
		select {
		case begun <- d:
		case <-ctx.Done():
			return false
		}
		select {
		case <-end:
			return true
		case <-ctx.Done():
			return false
		}
	}
	runEvents(t, s)
	next := func() time.Duration {
		t.Helper()
		select {
		case d := <-begun:
			return d
		case <-time.After(5 * time.Second):
			t.Fatal("no wait")
			return 0
		}
	}
	endWait := func() {
		t.Helper()
		select {
		case end <- struct{}{}:
		case <-time.After(5 * time.Second):
			t.Fatal("no wait under way")
		}
	}
	// f changes the period during a wait: that wait ends as it began, and
	// the ones after it follow the new period.
	f := func(period time.Duration, waits int) {
		t.Helper()
		s.StandIn(period)
		for range waits {
			endWait()
			if d := next(); d != period {
				t.Fatalf("waited %v, want %v", d, period)
			}
		}
	}
	if d := next(); d != time.Second {
		t.Fatalf("first wait %v without a kernel source, want 1s", d)
	}
	f(StandInPeriod(true), 3)
	f(StandInPeriod(false), 3)
}

// Where no kernel source watches containers, the relist stands in for the
// stream as often as the kubelet's generic PLEG relists.
func TestStandInPeriod(t *testing.T) {
	if got := StandInPeriod(true); got != time.Minute {
		t.Fatalf("with kernel sources: %v", got)
	}
	if got := StandInPeriod(false); got != time.Second {
		t.Fatalf("without kernel sources: %v", got)
	}
}
