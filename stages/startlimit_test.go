package stages

import (
	"testing"
	"time"
)

// simulate runs a backlog of starts through l, the limit's places always
// full (a burst bigger than the limit), on a runtime that shares servers
// between the starts in flight: each start needs work of service time,
// and n starts at once each progress at min(1, servers/n). It returns the
// limits l went through.
func simulate(l *StartLimit, servers float64, service time.Duration, starts int) []int {
	const dt = time.Millisecond
	type run struct {
		began time.Time
		done  time.Duration
	}
	now := time.Unix(1000, 0)
	var flight []*run
	var seen []int
	for ended := 0; ended < starts; {
		for len(flight) < l.Limit() {
			flight = append(flight, &run{began: now})
		}
		now = now.Add(dt)
		rate := min(1, servers/float64(len(flight)))
		kept := flight[:0]
		for _, r := range flight {
			r.done += time.Duration(float64(dt) * rate)
			if r.done < service {
				kept = append(kept, r)
				continue
			}
			ended++
			if l.Observe(now, now.Sub(r.began), true) {
				seen = append(seen, l.Limit())
			}
		}
		flight = kept
	}
	return seen
}

// cpuBound is a runtime with 3 servers and 300 ms starts: 10 starts a
// second at most, reached at 3 at once.
func cpuBound(l *StartLimit, starts int) []int {
	return simulate(l, 3, 300*time.Millisecond, starts)
}

func TestStartLimitStaysLowOnACPUBoundRuntime(t *testing.T) {
	l := NewStartLimit(64)
	seen := cpuBound(l, 400)
	// Past 3 at once nothing is gained: the limit keeps near the knee,
	// probing a step above it, never near the 64 workers.
	if got := l.Limit(); got < 2 || got > 6 {
		t.Fatalf("limit = %d on a runtime saturated at 3 starts, want 2..6 (went %v)", got, seen)
	}
	for _, n := range seen[1:] {
		if n > 8 {
			t.Fatalf("limit went to %d (%v): past the first probe of slow start, it stays near the knee", n, seen)
		}
	}
}

func TestStartLimitClimbsOnAWaitingRuntime(t *testing.T) {
	// Every start waits 100 ms whatever the concurrency (the fake one).
	l := NewStartLimit(64)
	seen := simulate(l, 1000, 100*time.Millisecond, 300)
	if l.Limit() != 64 {
		t.Fatalf("limit = %d on a runtime that never queues, want the maximum 64 (went %v)", l.Limit(), seen)
	}
	// Slow start: ×4 from 4.
	if len(seen) != 2 || seen[0] != 16 || seen[1] != 64 {
		t.Fatalf("limits %v, want 16 then 64", seen)
	}
}

func TestStartLimitClimbsWhileMoreAtOncePays(t *testing.T) {
	// 48 servers: throughput grows with concurrency up to 48 at once,
	// then stays.
	l := NewStartLimit(64)
	seen := simulate(l, 48, 250*time.Millisecond, 2000)
	if l.Limit() < 40 {
		t.Fatalf("limit = %d on a runtime that serves 48 at once, want it near 48 or above (went %v)", l.Limit(), seen)
	}
}

func TestStartLimitIgnoresRoundsThePodsPaced(t *testing.T) {
	l := NewStartLimit(64)
	now := time.Unix(1000, 0)
	// Pods arrive slower than the runtime starts them: nobody waits.
	for range 100 {
		now = now.Add(200 * time.Millisecond)
		if l.Observe(now, 300*time.Millisecond, false) {
			t.Fatalf("the limit moved to %d on rounds the pods paced", l.Limit())
		}
	}
}

func TestStartLimitBaseFollowsASlowerRuntime(t *testing.T) {
	l := NewStartLimit(64)
	now := time.Unix(0, 0)
	for range 50 {
		now = now.Add(100 * time.Millisecond)
		l.Observe(now, 100*time.Millisecond, false)
	}
	// From now on no start is faster than 1 s: after two base periods
	// that is the base.
	for range 200 {
		now = now.Add(time.Second)
		l.Observe(now, time.Second, false)
	}
	if got := l.Base(); got != time.Second {
		t.Fatalf("base = %s after 200 s of 1 s starts, want 1s", got)
	}
}

func TestStartLimitBounds(t *testing.T) {
	if l := NewStartLimit(1); l.Limit() != 1 {
		t.Fatalf("limit with one worker = %d, want 1", l.Limit())
	}
	l := NewStartLimit(64)
	// One server: nothing is gained past one at once.
	simulate(l, 1, 100*time.Millisecond, 300)
	if l.Limit() < startLimitMin {
		t.Fatalf("limit = %d, below the minimum %d", l.Limit(), startLimitMin)
	}
}
