package stages

import (
	"time"
)

// StartLimit decides how many pod starts may be in the sandbox and
// containers stages at once. It is a pure function of what it is fed: each
// start's runtime time, when it ended, and whether other starts were
// waiting for its place. StartGate applies it.
//
// A runtime that is busy (runc and the shims share the node's CPUs with
// everything else) finishes no more pods per second when it is handed
// more at once: each start only takes longer, and a burst of pods all
// finish together at the end. A runtime whose starts mostly wait (on a
// disk, on a remote service, or on a timer in the fake one) finishes more
// per second with more at once. So the limit climbs while more starts at
// once pay in throughput, and stops where they no longer do:
//
//   - Starts are counted in rounds of max(limit, 4). Only a round in which
//     every start that ended had others waiting for its place measures the
//     runtime (otherwise the pods, not the runtime, set the pace); its
//     throughput is its starts over the time since the previous round
//     ended.
//   - A limited round after the limit was raised compares its throughput
//     with the round before the raise. If the raise by a factor r brought
//     at least a quarter of the proportional gain (throughput × 1 +
//     (r−1)/4), and at least 5 %, the limit is raised again: ×4 while
//     no raise has failed (slow start), else by max(1, limit/8). If not, it goes back to where it was, slow start
//     ends, and the next round, whose starts began at the higher limit,
//     is not measured.
//   - A limited round at an unchanged limit is the reference for the next
//     raise, which follows at once: the limit keeps probing one step
//     above the knee.
//   - A round that was not limited resets the reference and slow start: a
//     new burst may find a runtime that is not the one the last burst saw.
//   - It stays within [Min, Max].
//
// It also keeps the fastest start of the last 30 to 60 s (Base), by which
// the gate decides that a start has stalled.
type StartLimit struct {
	Min, Max float64
	// Gain is the share of the proportional throughput gain a raise must
	// bring to be kept, and Noise the least gain that counts: rounds of a
	// few starts measure throughput to a few percent.
	Gain, Noise float64

	limit     float64
	slowStart bool
	// settle skips the round after a cut.
	settle bool

	// The current round: starts ended, whether any ended with nobody
	// waiting, and when the previous round ended.
	n         int
	unlimited bool
	from      time.Time
	// The reference: the limit and throughput of the round before the
	// last raise; refThr is 0 when there is none.
	refLimit, refThr float64

	// base is the fastest start of this base period and the previous one.
	base, prevBase time.Duration
	baseFrom       time.Time
}

// Start-limit defaults.
const (
	startLimitInitial = 4
	startLimitMin     = 2
	startLimitGain    = 0.25
	startLimitNoise   = 0.05
	// slowStartFactor is the raise until one fails: four, so that a
	// runtime whose starts wait reaches 128 at once in three rounds
	// (4, 16, 64), while a CPU-bound one, whose throughput a raise to
	// 16 leaves flat, is back at 4 after one round.
	slowStartFactor    = 4
	startLimitMinRound = 4
	startLimitBasePer  = 30 * time.Second
)

// NewStartLimit returns an adaptive limit between startLimitMin and
// most, starting at startLimitInitial.
func NewStartLimit(most int) *StartLimit {
	l := &StartLimit{
		Min: startLimitMin, Max: float64(most), Gain: startLimitGain, Noise: startLimitNoise,
		limit: startLimitInitial, slowStart: true,
	}
	l.Min = min(l.Min, l.Max)
	l.limit = min(max(l.limit, l.Min), l.Max)
	return l
}

// Limit is the starts allowed at once now.
func (l *StartLimit) Limit() int { return int(l.limit) }

// Observe takes one start that ended at now after spending sample in the
// runtime; waiting says whether other starts waited for its place. It
// reports whether the limit changed.
func (l *StartLimit) Observe(now time.Time, sample time.Duration, waiting bool) bool {
	l.observeBase(now, sample)
	if l.from.IsZero() {
		l.from = now.Add(-sample)
	}
	l.n++
	l.unlimited = l.unlimited || !waiting
	if l.n < max(l.Limit(), startLimitMinRound) {
		return false
	}
	span := now.Sub(l.from)
	thr := float64(l.n) / max(span.Seconds(), 1e-6)
	unlimited := l.unlimited
	l.n, l.unlimited, l.from = 0, false, now

	before := l.Limit()
	switch {
	case l.settle:
		// The starts of the round before a cut ran at the old limit:
		// this round is theirs, not the new limit's.
		l.settle = false
	case unlimited:
		l.refThr, l.slowStart = 0, true
	case l.refThr == 0 || l.limit == l.refLimit:
		// A reference at this limit: raise and see.
		l.refLimit, l.refThr = l.limit, thr
		l.raise()
	case thr >= l.refThr*max(1+l.Gain*(l.limit/l.refLimit-1), 1+l.Noise):
		l.refLimit, l.refThr = l.limit, thr
		l.raise()
	default:
		// The raise did not pay: back to where it was, measured anew.
		l.limit, l.refThr, l.slowStart, l.settle = l.refLimit, 0, false, true
	}
	return l.Limit() != before
}

func (l *StartLimit) raise() {
	if l.slowStart {
		l.limit *= slowStartFactor
	} else {
		l.limit += max(1, l.limit/8)
	}
	l.limit = min(max(l.limit, l.Min), l.Max)
}

// observeBase keeps the fastest start of the current and previous base
// periods.
func (l *StartLimit) observeBase(now time.Time, sample time.Duration) {
	if l.baseFrom.IsZero() {
		l.baseFrom = now
	}
	if now.Sub(l.baseFrom) >= startLimitBasePer {
		l.prevBase, l.base, l.baseFrom = l.base, 0, now
	}
	if l.base == 0 || sample < l.base {
		l.base = sample
	}
}

// Base is the fastest start of the last 30 to 60 s (0 before the first).
func (l *StartLimit) Base() time.Duration {
	if l.prevBase != 0 && l.prevBase < l.base {
		return l.prevBase
	}
	return l.base
}
