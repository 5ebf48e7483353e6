package stages

import (
	"testing"
	"time"
)

// runtimeModel is a runtime that finishes perSec starts a second once it
// has more than perSec×base of them at once, and each start in base
// otherwise: latency grows with the starts in flight past saturation.
func runtimeModel(base time.Duration, perSec float64) func(inFlight int) time.Duration {
	return func(n int) time.Duration {
		queued := time.Duration(float64(n) / perSec * float64(time.Second))
		return max(base, queued)
	}
}

// feed gives l rounds of samples from model at l's own limit, a clock
// step per sample, and returns the limits it went through.
func feed(l *StartLimit, model func(int) time.Duration, samples int) []int {
	now := time.Unix(0, 0)
	var seen []int
	for range samples {
		d := model(l.Limit())
		now = now.Add(d / time.Duration(max(l.Limit(), 1)))
		if l.Observe(now, d) {
			seen = append(seen, l.Limit())
		}
	}
	return seen
}

func TestStartLimitSettlesNearSaturation(t *testing.T) {
	// 10 starts/s of 300 ms each: more than 3 at once only queue.
	l := NewStartLimit(64)
	feed(l, runtimeModel(300*time.Millisecond, 10), 400)
	// Tolerance 1.5 lets latency reach 450 ms: about 4.5 at once. The
	// limit oscillates around that, never near the 64 workers.
	if got := l.Limit(); got < 2 || got > 8 {
		t.Fatalf("limit = %d on a runtime saturated at 3 starts, want 2..8", got)
	}
}

func TestStartLimitGrowsOnAnUncongestedRuntime(t *testing.T) {
	// A fake runtime: 100 ms whatever the concurrency.
	l := NewStartLimit(64)
	seen := feed(l, func(int) time.Duration { return 100 * time.Millisecond }, 200)
	if l.Limit() != 64 {
		t.Fatalf("limit = %d on a runtime that never queues, want the maximum 64 (went %v)", l.Limit(), seen)
	}
	// Slow start: doubling, so the maximum comes within a few rounds.
	if len(seen) == 0 || seen[0] != 8 {
		t.Fatalf("first change = %v, want a doubling to 8", seen)
	}
}

func TestStartLimitSlackIgnoresMicrosecondNoise(t *testing.T) {
	// A zero-latency runtime whose answers vary tenfold in microseconds.
	l := NewStartLimit(64)
	i := 0
	feed(l, func(int) time.Duration { i++; return time.Duration(20+(i%10)*30) * time.Microsecond }, 300)
	if l.Limit() != 64 {
		t.Fatalf("limit = %d under microsecond noise, want 64", l.Limit())
	}
}

func TestStartLimitRecoversWhenTheRuntimeFrees(t *testing.T) {
	l := NewStartLimit(64)
	feed(l, runtimeModel(300*time.Millisecond, 10), 300)
	low := l.Limit()
	// The load that made it slow is gone: every start takes the base
	// time again, whatever the concurrency.
	feed(l, func(int) time.Duration { return 300 * time.Millisecond }, 400)
	if l.Limit() <= low || l.Limit() < 32 {
		t.Fatalf("limit = %d after the runtime freed (was %d), want it grown past 32", l.Limit(), low)
	}
}

func TestStartLimitBaseFollowsASlowerRuntime(t *testing.T) {
	l := NewStartLimit(64)
	now := time.Unix(0, 0)
	for range 50 {
		now = now.Add(100 * time.Millisecond)
		l.Observe(now, 100*time.Millisecond)
	}
	// From now on no start is faster than 1 s: after two base periods
	// that is the base, not a queue.
	for range 200 {
		now = now.Add(time.Second)
		l.Observe(now, time.Second)
	}
	if got := l.baseline(); got != time.Second {
		t.Fatalf("base = %s after 200 s of 1 s starts, want 1s", got)
	}
}

func TestStartLimitBounds(t *testing.T) {
	l := NewStartLimit(1)
	if l.Limit() != 1 {
		t.Fatalf("limit with one worker = %d, want 1", l.Limit())
	}
	l = NewStartLimit(64)
	feed(l, func(n int) time.Duration { return time.Duration(n) * time.Second }, 500)
	if l.Limit() < startLimitMin {
		t.Fatalf("limit = %d, below the minimum %d", l.Limit(), startLimitMin)
	}
}
