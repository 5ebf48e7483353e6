package cgroupfs

import (
	"strconv"
	"sync"
	"testing"
	"time"
)

func TestRateTracker(t *testing.T) {
	var rt RateTracker
	t0 := time.Unix(1000, 0)
	f := func(key string, usage uint64, at time.Time, want uint64, wantOK bool) {
		t.Helper()
		got, ok := rt.NanoCores(key, usage, at)
		if got != want || ok != wantOK {
			t.Errorf("NanoCores(%s, %d, +%v) = %d, %v; want %d, %v", key, usage, at.Sub(t0), got, ok, want, wantOK)
		}
	}
	f("a", 5e9, t0, 0, false)                                     // first sample
	f("a", 5e9+3e8, t0.Add(300*time.Millisecond), 1e9, true)      // one core
	f("a", 5e9+3e8+5e8, t0.Add(1300*time.Millisecond), 5e8, true) // half a core
	f("b", 0, t0, 0, false)                                       // keys are apart
	f("b", 4e9, t0.Add(2*time.Second), 2e9, true)                 // two cores
	f("a", 1e6, t0.Add(2*time.Second), 0, false)                  // counter reset
	f("a", 1e6+25e7, t0.Add(2250*time.Millisecond), 1e9, true)    // rates from the reset sample
	f("a", 1e6+25e7, t0.Add(2250*time.Millisecond), 0, false)     // no time passed
	f("a", 1e6, t0.Add(2*time.Second), 0, false)                  // older sample, out of order: kept out
	f("a", 1e6+25e7+1e8, t0.Add(2350*time.Millisecond), 1e9, true)
	f("a", 1e6+25e7+1e8, t0.Add(3350*time.Millisecond), 0, true) // idle
	// Forty cores for an hour: delta*1e9 needs more than 64 bits.
	f("big", 1<<40, t0, 0, false)
	f("big", 1<<40+40*3600e9, t0.Add(time.Hour), 40e9, true)
	// A rate beyond 64 bits saturates.
	f("huge", 0, t0, 0, false)
	f("huge", 1<<63, t0.Add(time.Nanosecond), 1<<64-1, true)

	if n := rt.Len(); n != 4 {
		t.Fatalf("Len = %d, want 4", n)
	}
	rt.Forget("b")
	f("b", 4e9, t0.Add(3*time.Second), 0, false) // forgotten: first sample again
	rt.Prune(func(k string) bool { return k == "a" })
	if n := rt.Len(); n != 1 {
		t.Fatalf("Len after Prune = %d, want 1", n)
	}
	f("a", 1e6+25e7+1e8+1e9, t0.Add(4350*time.Millisecond), 1e9, true)
	f("big", 1<<41, t0.Add(2*time.Hour), 0, false)
}

func TestRateTrackerConcurrent(t *testing.T) {
	var rt RateTracker
	t0 := time.Unix(0, 0)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			key := "pod" + strconv.Itoa(g)
			for i := range uint64(1000) {
				got, ok := rt.NanoCores(key, i*1e6, t0.Add(time.Duration(i)*time.Millisecond))
				if i > 0 && (!ok || got != 1e9) {
					t.Errorf("%s sample %d: %d, %v", key, i, got, ok)
					return
				}
			}
		})
	}
	wg.Wait()
}
