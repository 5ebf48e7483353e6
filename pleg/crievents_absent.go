package pleg

import (
	"context"
	"time"

	"github.com/VictoriaMetrics/metrics"
)

// Runtimes without a working event stream exist: containerd 1.6 answers
// Unimplemented, and k8s.io/cri-client's fake runtime ends every stream
// as soon as it opens. Reconnecting to the latter every 10 s, and
// relisting after each reconnection as a new stream needs, cost an idle
// node of 10,000 pods 1.6 % of a core and the runtime 0.8 % (fakecri
// --events=end), for nothing.
// Such a runtime counts as having no stream: pod state comes from the
// kernel's events (exits, OOM kills, emptied cgroups) and from a relist
// that stands in for the stream, and the stream is tried again rarely,
// in case the runtime was upgraded or mended under podline.
//
// The rule: a stream ends as soon as it opens when its first Recv fails,
// with no event, within deadWithin (1 s) of being called (the resync
// before it is not counted: at 10,000 pods it takes longer than that);
// eventsDeadInARow such streams in a row, or an Unimplemented answer,
// make the stream absent. Opens that fail say nothing either way (the
// runtime is unreachable; the open waits for it). A stream that lived or
// delivered an event starts the count over.
const (
	eventsDeadWithin  = time.Second
	eventsDeadInARow  = 3
	eventsRetryAbsent = 5 * time.Minute
	eventsRetryMax    = 30 * time.Minute
)

// criEventsAbsent is 1 while the runtime counts as having no working
// container event stream.
var criEventsAbsent = metrics.NewGauge(`podline_pleg_cri_events_absent`, nil)

// StandInPeriod is how often the relist stands in for an absent stream.
// With the kernel's events, what only the runtime sees (a container made
// or removed behind podline's back, a runtime that lost state) shows
// within a minute: at 10,000 pods on the fake runtime a relist costs the
// agent about 0.08 s of CPU and the runtime 0.06 s, so every minute the
// idle agent uses 0.25 % of a core, half the 0.5 % target, where every
// 20 s would reach it (bench/results/2026-11-28-vm). Without any
// kernel source the relist sees every exit alone, and runs every second
// as the kubelet's generic PLEG does.
func StandInPeriod(kernelSources bool) time.Duration {
	if kernelSources {
		return time.Minute
	}
	return time.Second
}

// StandIn sets how often the relist stands in for an absent stream
// (default StandInPeriod(true)). It may be called while Run runs, as
// kernel sources start or stop: the wait under way ends first, then the
// waits follow the new period.
func (s *CRIEvents) StandIn(period time.Duration) { s.standInEvery.Store(int64(period)) }

func (s *CRIEvents) standInPeriod() time.Duration { return time.Duration(s.standInEvery.Load()) }

// markAbsent records that the runtime has no working stream, saying so
// once per absence; why names the evidence.
func (s *CRIEvents) markAbsent(unimplemented bool, err error) {
	if s.unsupported.Swap(true) {
		s.log.Debug("container event stream still absent", "err", err, "retryIn", s.retryIn)
		return
	}
	s.absentSince.Store(time.Now().UnixNano())
	s.retryIn = eventsRetryAbsent
	criEventsAbsent.Set(1)
	if unimplemented {
		s.log.Info("the runtime has no container event stream; pod state comes from the kernel's events and a relist in its stead",
			"relistEvery", s.standInPeriod(), "retryIn", s.retryIn, "err", err)
		return
	}
	s.log.Warn("the runtime's container event stream ends as soon as it opens; treating it as absent: pod state comes from the kernel's events and a relist in its stead",
		"streams", eventsDeadInARow, "relistEvery", s.standInPeriod(), "retryIn", s.retryIn, "err", err)
}

// proven is called once a stream delivered an event or lived deadWithin:
// if the stream was absent, it works again.
func (s *CRIEvents) proven() {
	if !s.unsupported.Swap(false) {
		return
	}
	criEventsAbsent.Set(0)
	s.log.Info("the runtime's container event stream works again", "absentFor", time.Since(time.Unix(0, s.absentSince.Load())).Round(time.Second))
}

// standIn relists every standInPeriod() until the next try of the absent
// stream is due, and moves that try further off for the time after. It
// reports false when ctx ended.
func (s *CRIEvents) standIn(ctx context.Context) bool {
	left := s.retryIn
	s.retryIn = min(2*s.retryIn, eventsRetryMax)
	for left > 0 {
		d := min(s.standInPeriod(), left)
		if !s.sleep(ctx, d) {
			return false
		}
		left -= d
		// The try that follows the last wait resyncs anyway.
		if left > 0 && s.resync != nil {
			if err := s.resync(ctx); err != nil && ctx.Err() == nil {
				s.log.Warn("relist in the container event stream's stead failed", "err", err)
			}
		}
	}
	return true
}
