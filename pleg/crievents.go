package pleg

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/VictoriaMetrics/metrics"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podline/podline/cri"
)

// EventRuntime is the part of the CRI the event source reads; *cri.Client
// has it.
type EventRuntime interface {
	ContainerEvents(ctx context.Context) (runtimeapi.RuntimeService_GetContainerEventsClient, error)
}

var _ Source = (*CRIEvents)(nil)

// Received counts every event by type, podline's or not; applied counts
// events that changed the cache (and notified their pod); stale counts
// events refused as older than what was applied; reconnects counts
// connection attempts after the first.
var (
	criEventsCreated    = metrics.NewCounter(`podline_pleg_cri_events_received_total{type="created"}`)
	criEventsStarted    = metrics.NewCounter(`podline_pleg_cri_events_received_total{type="started"}`)
	criEventsStopped    = metrics.NewCounter(`podline_pleg_cri_events_received_total{type="stopped"}`)
	criEventsDeleted    = metrics.NewCounter(`podline_pleg_cri_events_received_total{type="deleted"}`)
	criEventsOther      = metrics.NewCounter(`podline_pleg_cri_events_received_total{type="unknown"}`)
	criEventsApplied    = metrics.NewCounter(`podline_pleg_cri_events_applied_total`)
	criEventsStale      = metrics.NewCounter(`podline_pleg_cri_events_stale_total`)
	criEventsReconnects = metrics.NewCounter(`podline_pleg_cri_events_reconnects_total`)
)

// ErrEventsUnsupported is what Healthy returns once the runtime turned out
// not to offer GetContainerEvents (containerd 1.6): not a fault of the node,
// the relist carries the load alone.
var ErrEventsUnsupported = errors.New("the runtime offers no container event stream")

// Reconnect back-off, between attempts that reached the runtime (a
// cri.Client's open waits while the runtime is unreachable, so a restart
// is found again as soon as it answers): a runtime that answers but keeps
// breaking the stream or failing the resync costs one attempt per 10 s, and
// a stream that lived a healthy minute starts over from the shortest delay.
const (
	eventsMinBackoff   = 100 * time.Millisecond
	eventsMaxBackoff   = 10 * time.Second
	eventsHealthyAfter = time.Minute
)

// CRIEvents is the event-driven lifecycle source: it follows the runtime's
// GetContainerEvents stream, merges the statuses every event carries into
// the Cache and notifies the pods that moved. A change reaches the pipeline
// within one event delivery instead of one relist period, and an idle node
// costs one blocked Recv.
//
// Events can be lost while the stream is down, so every (re)connection is
// followed by one resync: a full relist that closes the gap.
type CRIEvents struct {
	rt     EventRuntime
	cache  *Cache
	notify func(types.UID)
	resync func(context.Context) error
	log    *slog.Logger

	minBackoff, maxBackoff, healthyAfter time.Duration
	sleep                                func(context.Context, time.Duration) bool // sleepCtx; tests record instead

	connected   atomic.Bool
	unsupported atomic.Bool
	changedAt   atomic.Int64 // unix ns of the last connect or disconnect; 0: never connected

	// Owned by the Run goroutine.
	objects objectTable
}

// NewCRIEvents returns an event source. notify is called once per event
// that changed the pod's cached state; it may block (the pipeline's
// backpressure). resync is called once after each connection of the stream
// is opened, before any of its events are applied; nil skips it.
func NewCRIEvents(rt EventRuntime, cache *Cache, notify func(types.UID), resync func(context.Context) error, log *slog.Logger) *CRIEvents {
	return &CRIEvents{
		rt: rt, cache: cache, notify: notify, resync: resync, log: log,
		minBackoff:   eventsMinBackoff,
		maxBackoff:   eventsMaxBackoff,
		healthyAfter: eventsHealthyAfter,
		sleep:        sleepCtx,
		objects:      newObjectTable(),
	}
}

// Connected reports whether the stream is open and the resync after
// opening it succeeded, i.e. the cache misses no event.
func (s *CRIEvents) Connected() bool { return s.connected.Load() }

// Healthy returns nil while connected. It returns ErrEventsUnsupported
// when the runtime has no event stream, and another error while the stream
// is down.
func (s *CRIEvents) Healthy() error {
	if s.unsupported.Load() {
		return ErrEventsUnsupported
	}
	if s.connected.Load() {
		return nil
	}
	at := s.changedAt.Load()
	if at == 0 {
		return errors.New("container event stream not connected yet")
	}
	return fmt.Errorf("container event stream down for %s", time.Since(time.Unix(0, at)).Round(time.Millisecond))
}

// Run follows the event stream until ctx ends, reconnecting with back-off
// whenever it breaks. It returns early, after one log line, when the
// runtime does not implement the stream.
func (s *CRIEvents) Run(ctx context.Context) {
	delay := s.minBackoff
	for attempt := 0; ; attempt++ {
		if attempt > 0 {
			if !s.sleep(ctx, delay) {
				return
			}
			criEventsReconnects.Inc()
			delay = min(2*delay, s.maxBackoff)
		}
		start := time.Now()
		connected, err := s.follow(ctx)
		if ctx.Err() != nil {
			return
		}
		if errors.Is(err, ErrEventsUnsupported) {
			s.unsupported.Store(true)
			s.log.Info("the runtime has no container event stream; pod state comes from relists alone", "err", err)
			return
		}
		if time.Since(start) >= s.healthyAfter {
			delay = s.minBackoff
		}
		// One warning per outage, not one per attempt while it lasts.
		if connected {
			s.log.Warn("container event stream broke; reconnecting", "err", err, "retryIn", delay)
		} else {
			s.log.Debug("container event stream unavailable", "err", err, "retryIn", delay)
		}
	}
}

// follow runs one connection: open, resync, then apply events until the
// stream breaks. It always returns an error; connected tells whether the
// connection got as far as delivering events.
func (s *CRIEvents) follow(ctx context.Context) (connected bool, err error) {
	sctx, cancel := context.WithCancel(ctx)
	defer cancel() // releases the stream on every return
	stream, err := s.rt.ContainerEvents(sctx)
	if err != nil {
		return false, classifyStreamErr("open container event stream", err)
	}
	// The stream is open, so the runtime queues events for us while the
	// resync lists; they are applied afterwards and merge monotonically.
	if s.resync != nil {
		if err := s.resync(ctx); err != nil {
			// Without it the cache may miss what happened while the stream
			// was down; reconnecting retries both.
			return false, fmt.Errorf("resync after connecting the event stream: %w", err)
		}
	}
	s.objects.prune(s.cache, time.Now())
	brokeAt := s.changedAt.Load()
	s.setConnected(true)
	defer s.setConnected(false)
	if brokeAt != 0 {
		// The warning at the break has its pair: when the runtime was
		// back for podline, which a restart's convergence is timed from.
		s.log.Info("container event stream reconnected", "down", time.Since(time.Unix(0, brokeAt)).Round(time.Millisecond))
	} else {
		s.log.Debug("container event stream connected")
	}
	for {
		ev, err := stream.Recv()
		if err != nil {
			return true, classifyStreamErr("receive container event", err)
		}
		s.handle(ev)
	}
}

func (s *CRIEvents) setConnected(v bool) {
	s.connected.Store(v)
	s.changedAt.Store(time.Now().UnixNano())
}

// classifyStreamErr turns "the runtime lacks the call" into
// ErrEventsUnsupported. cri.Client reports it on the first Recv, other
// clients may already fail the open.
func classifyStreamErr(what string, err error) error {
	if errors.Is(err, cri.ErrUnimplemented) {
		return fmt.Errorf("%s: %w: %w", what, ErrEventsUnsupported, err)
	}
	return fmt.Errorf("%s: %w", what, err)
}

// handle counts an event, applies it and notifies its pod if it changed the
// cache.
func (s *CRIEvents) handle(ev *runtimeapi.ContainerEventResponse) {
	switch ev.GetContainerEventType() {
	case runtimeapi.ContainerEventType_CONTAINER_CREATED_EVENT:
		criEventsCreated.Inc()
	case runtimeapi.ContainerEventType_CONTAINER_STARTED_EVENT:
		criEventsStarted.Inc()
	case runtimeapi.ContainerEventType_CONTAINER_STOPPED_EVENT:
		criEventsStopped.Inc()
	case runtimeapi.ContainerEventType_CONTAINER_DELETED_EVENT:
		criEventsDeleted.Inc()
	default:
		criEventsOther.Inc()
	}
	uid, changed, stale := s.apply(ev, time.Now())
	if stale {
		criEventsStale.Inc()
	}
	if changed {
		criEventsApplied.Inc()
		s.notify(uid)
	}
}

// sleepCtx waits d or until ctx ends; it reports whether d passed.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
