package prober

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// checkHeap fails unless every entry is due no sooner than its parent,
// carries its probe's due time and is where its probe says it is.
func checkHeap(t *testing.T, h *probeHeap) {
	t.Helper()
	for i, e := range h.es {
		if e.p.index != i {
			t.Fatalf("entry %d: probe says index %d", i, e.p.index)
		}
		if e.at != h.key(e.p.due) {
			t.Fatalf("entry %d: key %d, probe due at %d", i, e.at, h.key(e.p.due))
		}
		if i > 0 && h.es[(i-1)/4].at > e.at {
			t.Fatalf("entry %d (%d) due before its parent (%d)", i, e.at, h.es[(i-1)/4].at)
		}
	}
}

// TestProbeHeapRandom pushes, re-arms and removes probes at random and
// checks the order after every step, then drains the heap: the probes
// come out in due order, and each one left knows it is off the heap.
func TestProbeHeapRandom(t *testing.T) {
	epoch := time.Unix(1_800_000_000, 0)
	h := &probeHeap{epoch: epoch}
	r := rand.New(rand.NewPCG(1, 2))
	at := func() time.Time { return epoch.Add(time.Duration(r.IntN(1000)) * time.Millisecond) }
	var all []*probe
	for range 3000 {
		switch op := r.IntN(10); {
		case op < 5 || len(all) == 0:
			p := &probe{index: -1, due: at()}
			h.push(p)
			all = append(all, p)
		case op < 8:
			p := all[r.IntN(len(all))]
			if p.index >= 0 {
				p.due = at()
				h.fix(p.index)
			}
		default:
			i := r.IntN(len(all))
			if p := all[i]; p.index >= 0 {
				h.remove(p.index)
				if p.index != -1 {
					t.Fatalf("removed probe has index %d", p.index)
				}
				all = slices.Delete(all, i, i+1)
			}
		}
		checkHeap(t, h)
	}
	if h.Len() != len(all) {
		t.Fatalf("heap holds %d probes, %d pushed and not removed", h.Len(), len(all))
	}
	var last time.Time
	for h.Len() > 0 {
		p := h.pop()
		if p.due.Before(last) {
			t.Fatalf("popped %v after %v", p.due, last)
		}
		if p.index != -1 {
			t.Fatalf("popped probe has index %d", p.index)
		}
		last = p.due
	}
}

// BenchmarkProbeHeap is the heap's part of one probe run with 20,000
// probes armed (10,000 pods, two probes each): the probe due soonest comes
// off and goes back one period later.
func BenchmarkProbeHeap(b *testing.B) {
	const probes, period = 20000, 10 * time.Second
	epoch := time.Unix(1_800_000_000, 0)
	h := &probeHeap{epoch: epoch}
	r := rand.New(rand.NewPCG(1, 2))
	for range probes {
		h.push(&probe{index: -1, due: epoch.Add(time.Duration(r.Int64N(int64(period))))})
	}
	for b.Loop() {
		p := h.pop()
		p.due = p.due.Add(period)
		h.push(p)
	}
}
