package stages

import (
	"slices"
	"time"
)

// StartLimit decides how many pod starts may be in the sandbox and
// containers stages at once. It is a pure function of the latencies it is
// fed and the clock readings that come with them; StartGate applies it.
//
// A runtime that is busy (runc and the shims share the node's CPUs with
// everything else) finishes no more pods per second when it is handed
// more at once: each start only takes longer, and a burst of pods all
// finish together at the end. So the limit is kept just above the point
// where more concurrency stops buying throughput, which is where latency
// starts to grow (TCP Vegas's rule, on pod starts):
//
//   - A sample is one pass's time inside those two stages' handlers: the
//     runtime's work for that pod, not its waits in queues.
//   - Samples are taken in rounds of max(limit, 4). A round's median m is
//     set against base, the lowest sample of the last two base periods
//     (30 s each), so that base follows a runtime that became slower for
//     good.
//   - m above base×Tolerance, and more than Slack above it, means starts
//     queue inside the runtime: the limit is multiplied by
//     max(1/2, base×Tolerance/m).
//   - Otherwise the limit grows: doubling until the first queueing round
//     (slow start), then by one, or an eighth, whichever is more.
//   - It stays within [Min, Max].
//
// Slack keeps a runtime that answers in microseconds (the fake one) from
// reading scheduling noise as queueing: its limit goes to Max and stays.
type StartLimit struct {
	Min, Max  float64
	Tolerance float64
	Slack     time.Duration

	limit     float64
	slowStart bool
	round     []time.Duration
	// base is the lowest sample of this base period and the previous one.
	base, prevBase time.Duration
	baseFrom       time.Time
}

// Start-limit defaults.
const (
	startLimitInitial   = 4
	startLimitMin       = 2
	startLimitTolerance = 1.5
	startLimitSlack     = 20 * time.Millisecond
	startLimitMinRound  = 4
	startLimitBasePer   = 30 * time.Second
)

// NewStartLimit returns an adaptive limit between startLimitMin and
// most, starting at startLimitInitial.
func NewStartLimit(most int) *StartLimit {
	l := &StartLimit{
		Min: startLimitMin, Max: float64(most),
		Tolerance: startLimitTolerance, Slack: startLimitSlack,
		limit: startLimitInitial, slowStart: true,
	}
	l.Min = min(l.Min, l.Max)
	l.limit = min(max(l.limit, l.Min), l.Max)
	return l
}

// Limit is the starts allowed at once now.
func (l *StartLimit) Limit() int { return int(l.limit) }

// Observe takes one start's runtime time at now. It reports whether the
// limit changed.
func (l *StartLimit) Observe(now time.Time, sample time.Duration) bool {
	l.observeBase(now, sample)
	l.round = append(l.round, sample)
	if len(l.round) < max(int(l.limit), startLimitMinRound) {
		return false
	}
	slices.Sort(l.round)
	m := l.round[len(l.round)/2]
	l.round = l.round[:0]

	before := l.Limit()
	base := l.baseline()
	allowed := time.Duration(float64(base) * l.Tolerance)
	if m > allowed && m-base > l.Slack {
		l.slowStart = false
		l.limit *= max(0.5, float64(allowed)/float64(m))
	} else if l.slowStart {
		l.limit *= 2
	} else {
		l.limit += max(1, l.limit/8)
	}
	l.limit = min(max(l.limit, l.Min), l.Max)
	return l.Limit() != before
}

// observeBase keeps the lowest sample of the current and previous base
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

func (l *StartLimit) baseline() time.Duration {
	if l.prevBase != 0 && l.prevBase < l.base {
		return l.prevBase
	}
	return l.base
}
