package cgroupfs

import (
	"math/bits"
	"sync"
	"time"
)

// RateTracker turns cumulative CPU counters into usageNanoCores, the CPU
// rate the Summary API reports, from the last two reads of each key (a pod
// UID, a container ID). cAdvisor rates between background samples; podline
// reads only when asked, so the window is the time between two scrapes.
// The zero value is ready; it is safe for concurrent use.
type RateTracker struct {
	mu   sync.Mutex
	last map[string]rateSample
}

type rateSample struct {
	usage uint64
	at    time.Time
}

// NanoCores remembers the sample and returns the CPU rate since the
// previous one of key, in billionths of a core. ok is false, with no rate,
// on the first sample of a key, after a counter reset (the cgroup was made
// anew under the same key) and when at is not after the previous sample
// (which is then kept, not replaced). Every caller shares the window: two
// scrapers of one key each see the rate since the other's last read.
func (t *RateTracker) NanoCores(key string, cpuUsageNanos uint64, at time.Time) (nanoCores uint64, ok bool) {
	t.mu.Lock()
	prev, seen := t.last[key]
	window := at.Sub(prev.at)
	// Two scrapes racing may report out of order: keep the newer sample.
	if !seen || window > 0 {
		if t.last == nil {
			t.last = make(map[string]rateSample)
		}
		t.last[key] = rateSample{usage: cpuUsageNanos, at: at}
	}
	t.mu.Unlock()
	if !seen || window <= 0 || cpuUsageNanos < prev.usage {
		return 0, false
	}
	// delta*1e9 overflows 64 bits past 18 s of CPU in the window.
	hi, lo := bits.Mul64(cpuUsageNanos-prev.usage, uint64(time.Second))
	if hi >= uint64(window) {
		return 1<<64 - 1, true
	}
	q, _ := bits.Div64(hi, lo, uint64(window))
	return q, true
}

// Forget drops key, for a pod or container that is gone.
func (t *RateTracker) Forget(key string) {
	t.mu.Lock()
	delete(t.last, key)
	t.mu.Unlock()
}

// Prune drops every key keep rejects; keep runs under the tracker's lock,
// so it must not call the tracker.
func (t *RateTracker) Prune(keep func(key string) bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for k := range t.last {
		if !keep(k) {
			delete(t.last, k)
		}
	}
}

// Len is the number of keys remembered.
func (t *RateTracker) Len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.last)
}
