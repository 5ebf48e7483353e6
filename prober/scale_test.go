package prober

import (
	"fmt"
	"runtime"
	"testing"
	"time"
)

// Goroutines do not grow with probes: ten thousand probes run on the
// worker pool and the one scheduler.
func TestGoroutinesDoNotGrowWithProbes(t *testing.T) {
	const workers, probes = 8, 10000
	before := runtime.NumGoroutine()
	h := newHarness(t, workers)
	h.m.jitter = func(p time.Duration) time.Duration { return time.Duration(len(h.m.pods)) * time.Millisecond }
	for i := range probes {
		uid := fmt.Sprintf("g%05d", i)
		h.m.Sync(podWith(uid, nil, execProbe("ready"), nil), "10.0.0.1", runningApp("c"+uid, h.clock.Now()))
	}
	peak := 0
	for range 10 {
		h.clock.Advance(time.Second)
		peak = max(peak, runtime.NumGoroutine())
		h.settle()
		peak = max(peak, runtime.NumGoroutine())
	}
	if n := h.exec.total(); n != probes {
		t.Fatalf("%d runs in one period, want %d", n, probes)
	}
	// The harness's Run goroutine, its workers and the test's own slack.
	if limit := before + 1 + workers + 2; peak > limit {
		t.Fatalf("%d goroutines with %d probes (%d before), want at most %d", peak, probes, before, limit)
	}
	t.Logf("%d goroutines before, at most %d with %d probes and %d workers", before, peak, probes, workers)
	// The pods stay: removing them is TestRemoveStopsProbes's business, and
	// ten thousand removals under -race would double this test's time.
}
