package gctune

import (
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

func TestLimit(t *testing.T) {
	for _, c := range []struct {
		live, other, percent, floor uint64
		want                        int64
	}{
		{live: 100 << 20, other: 20 << 20, percent: 50, floor: 16 << 20, want: 170 << 20},
		// A small heap gets the floor as headroom.
		{live: 4 << 20, other: 10 << 20, percent: 50, floor: 16 << 20, want: 30 << 20},
		{live: 0, other: 0, percent: 50, floor: 16 << 20, want: 16 << 20},
	} {
		if got := Limit(c.live, c.other, c.percent, c.floor); got != c.want {
			t.Errorf("Limit(%d, %d, %d, %d) = %d, want %d", c.live, c.other, c.percent, c.floor, got, c.want)
		}
	}
}

var keep [][]byte

// With the tuner on, GOGC is off and the limit follows the live heap from
// one collection to the next.
func TestTunerFollowsTheLiveHeap(t *testing.T) {
	tu := Start(50, 8<<20)
	defer tu.Stop()
	if p := debug.SetGCPercent(-1); p != -1 {
		t.Fatalf("GC percent %d, want off", p)
	}
	first := tu.Limit()
	if first <= 0 || debug.SetMemoryLimit(-1) != first {
		t.Fatalf("limit %d not in force (runtime has %d)", first, debug.SetMemoryLimit(-1))
	}
	for range 64 {
		keep = append(keep, make([]byte, 1<<20))
	}
	// The finalizer runs after the collection, in its own goroutine.
	deadline := time.Now().Add(5 * time.Second)
	for tu.Limit() < first+64<<20 {
		if time.Now().After(deadline) {
			t.Fatalf("limit %d after 64 MiB more live heap, first %d", tu.Limit(), first)
		}
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	keep = nil
	grown := tu.Limit()
	deadline = time.Now().Add(5 * time.Second)
	for tu.Limit() >= grown-32<<20 {
		if time.Now().After(deadline) {
			t.Fatalf("limit %d after the 64 MiB were dropped, was %d", tu.Limit(), grown)
		}
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
}
