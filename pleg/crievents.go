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

// ErrEventsUnsupported is what Healthy returns while the runtime offers no
// working GetContainerEvents: it answers Unimplemented (containerd 1.6) or
// ends every stream as soon as it opens. Not a fault of the node: the
// kernel's events and a relist carry the load (crievents_absent.go).
var ErrEventsUnsupported = errors.New("the runtime offers no working container event stream")

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

	// The stream's absence (crievents_absent.go). unsupported is set while
	// it is absent; absentSince (unix ns) is when that began.
	deadWithin time.Duration
	// standInEvery (a time.Duration) is set from outside while Run runs,
	// as kernel sources start and stop.
	standInEvery atomic.Int64
	retryIn      time.Duration // owned by the Run goroutine
	// warnedBreak: the last stream's break was warned of (Run goroutine).
	warnedBreak bool
	absentSince atomic.Int64
}

// NewCRIEvents returns an event source. notify is called once per event
// that changed the pod's cached state; it may block (the pipeline's
// backpressure). resync is called once after each connection of the stream
// is opened, before any of its events are applied; nil skips it.
func NewCRIEvents(rt EventRuntime, cache *Cache, notify func(types.UID), resync func(context.Context) error, log *slog.Logger) *CRIEvents {
	s := &CRIEvents{
		rt: rt, cache: cache, notify: notify, resync: resync, log: log,
		minBackoff:   eventsMinBackoff,
		maxBackoff:   eventsMaxBackoff,
		healthyAfter: eventsHealthyAfter,
		sleep:        sleepCtx,
		objects:      newObjectTable(),
		deadWithin:   eventsDeadWithin,
	}
	s.StandIn(StandInPeriod(true))
	return s
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
// whenever it breaks. A runtime whose stream is absent (answers
// Unimplemented, or ends each stream as soon as it opens) is relisted in
// the stream's stead and its stream tried again rarely.
func (s *CRIEvents) Run(ctx context.Context) {
	delay := s.minBackoff
	dead := 0 // streams in a row that ended as soon as they opened
	for attempt := 0; ; attempt++ {
		if attempt > 0 {
			if s.unsupported.Load() {
				if !s.standIn(ctx) {
					return
				}
			} else {
				if !s.sleep(ctx, delay) {
					return
				}
				delay = min(2*delay, s.maxBackoff)
			}
			criEventsReconnects.Inc()
		}
		start := time.Now()
		out := s.follow(ctx)
		if ctx.Err() != nil {
			return
		}
		if time.Since(start) >= s.healthyAfter {
			delay = s.minBackoff
		}
		switch {
		case errors.Is(out.err, ErrEventsUnsupported):
			s.markAbsent(true, out.err)
		case out.dead:
			if dead++; dead >= eventsDeadInARow || s.unsupported.Load() {
				s.markAbsent(false, out.err)
			} else {
				s.log.Debug("container event stream ended as soon as it opened", "err", out.err, "inARow", dead, "retryIn", delay)
			}
		case s.unsupported.Load():
			// A try of the absent stream that could not open: the next
			// try is due later.
			s.log.Debug("container event stream still absent", "err", out.err, "retryIn", s.retryIn)
		case out.connected:
			// One warning per outage, not one per attempt while it lasts.
			dead = 0
			s.warnedBreak = true
			s.log.Warn("container event stream broke; reconnecting", "err", out.err, "retryIn", delay)
		default:
			s.log.Debug("container event stream unavailable", "err", out.err, "retryIn", delay)
		}
	}
}

// followed is how one connection ended: connected when it got as far as
// receiving, dead when it then ended as soon as it opened (no event, its
// first Recv failing within deadWithin), and always an error.
type followed struct {
	connected, dead bool
	err             error
}

// follow runs one connection: open, resync, then apply events until the
// stream breaks.
func (s *CRIEvents) follow(ctx context.Context) followed {
	sctx, cancel := context.WithCancel(ctx)
	defer cancel() // releases the stream on every return
	stream, err := s.rt.ContainerEvents(sctx)
	if err != nil {
		return followed{err: classifyStreamErr("open container event stream", err)}
	}
	// The stream is open, so the runtime queues events for us while the
	// resync lists; they are applied afterwards and merge monotonically.
	if s.resync != nil {
		if err := s.resync(ctx); err != nil {
			// Without it the cache may miss what happened while the stream
			// was down; reconnecting retries both.
			return followed{err: fmt.Errorf("resync after connecting the event stream: %w", err)}
		}
	}
	s.objects.prune(s.cache, time.Now())
	brokeAt := s.changedAt.Load()
	s.setConnected(true)
	defer s.setConnected(false)
	if s.warnedBreak {
		// The warning at the break has its pair: when the runtime was
		// back for podline, which a restart's convergence is timed from.
		s.warnedBreak = false
		s.log.Info("container event stream reconnected", "down", time.Since(time.Unix(0, brokeAt)).Round(time.Millisecond))
	} else {
		s.log.Debug("container event stream connected")
	}
	// A stream that outlives deadWithin works, events or not (an idle
	// node has none to send).
	receiving := time.Now()
	lived := time.AfterFunc(s.deadWithin, s.proven)
	defer lived.Stop()
	for delivered := false; ; delivered = true {
		ev, err := stream.Recv()
		if err != nil {
			return followed{
				connected: true,
				dead:      !delivered && time.Since(receiving) < s.deadWithin,
				err:       classifyStreamErr("receive container event", err),
			}
		}
		if !delivered {
			lived.Stop()
			s.proven()
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
