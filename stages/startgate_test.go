package stages

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"
)

func gateWork(t *testing.T) *Work {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	return &Work{ctx: ctx, cancel: cancel}
}

// admitted collects what the gate hands on by itself.
type admitted struct {
	mu  sync.Mutex
	got []*Work
	ch  chan *Work
}

func newAdmitted(g *StartGate) *admitted {
	a := &admitted{ch: make(chan *Work, 16)}
	g.admit = func(w *Work) {
		a.mu.Lock()
		a.got = append(a.got, w)
		a.mu.Unlock()
		a.ch <- w
	}
	return a
}

func (a *admitted) next(t *testing.T) *Work {
	t.Helper()
	select {
	case w := <-a.ch:
		return w
	case <-time.After(5 * time.Second):
		t.Fatal("the gate handed nothing on")
		return nil
	}
}

func TestStartGateLetsInInArrivalOrder(t *testing.T) {
	g := NewFixedStartGate(2)
	newAdmitted(g)
	ws := []*Work{gateWork(t), gateWork(t), gateWork(t), gateWork(t), gateWork(t)}
	var in []int
	for i, w := range ws {
		if g.take(w) {
			in = append(in, i)
		}
	}
	if !slices.Equal(in, []int{0, 1}) {
		t.Fatalf("let in at once: %v, want [0 1]", in)
	}
	next := func(done int) []*Work { return g.done(ws[done], true) }
	if got := next(1); len(got) != 1 || got[0] != ws[2] {
		t.Fatalf("after 1 left: %v, want pass 2", got)
	}
	if got := next(0); len(got) != 1 || got[0] != ws[3] {
		t.Fatalf("after 0 left: %v, want pass 3", got)
	}
	// A pass that arrives while others wait queues behind them, even
	// with a place free.
	g.done(ws[2], true) // lets 4 in
	late := gateWork(t)
	if g.take(late) {
		t.Fatal("a pass that arrived last was let in")
	}
	if got := g.done(ws[3], true); len(got) != 1 || got[0] != late {
		t.Fatalf("after 3 left: %v, want the late pass", got)
	}
	if g.MostStarts() != 2 {
		t.Fatalf("at most %d in at once, want 2", g.MostStarts())
	}
	if g.done(gateWork(t), true) != nil {
		t.Fatal("a pass that held no place let another in")
	}
}

func TestStartGateCancelledPassLeavesTheLine(t *testing.T) {
	g := NewFixedStartGate(1)
	a := newAdmitted(g)
	first, waiting, behind := gateWork(t), gateWork(t), gateWork(t)
	g.take(first)
	g.take(waiting)
	g.take(behind)
	waiting.cancel()
	if w := a.next(t); w != waiting {
		t.Fatal("the gate handed on another pass than the cancelled one")
	}
	if waiting.start.held {
		t.Fatal("a cancelled pass was handed on with a place")
	}
	if got := g.done(first, true); len(got) != 1 || got[0] != behind {
		t.Fatalf("after the first left: %v, want the pass behind the cancelled one", got)
	}
}

func TestStartGateStalledStartStopsCounting(t *testing.T) {
	g := NewFixedStartGate(1)
	g.stall = 20 * time.Millisecond
	a := newAdmitted(g)
	slow, next := gateWork(t), gateWork(t)
	g.take(slow)
	if g.take(next) {
		t.Fatal("a second start was let in past a limit of one")
	}
	// slow holds on (an image pull): next goes in once slow stalls.
	if w := a.next(t); w != next || !next.start.held {
		t.Fatal("the pass behind a stalled start was not let in with a place")
	}
	// The stalled start ends: it frees no place it no longer counts in.
	g.done(slow, true)
	third := gateWork(t)
	if g.take(third) {
		t.Fatal("a start was let in while the limit's one place was taken")
	}
	if got := g.done(next, true); len(got) != 1 || got[0] != third {
		t.Fatalf("after next left: %v, want third", got)
	}
}

func TestStartGateFeedsTheLimit(t *testing.T) {
	g := NewAdaptiveStartGate(64)
	newAdmitted(g)
	clock := time.Unix(1000, 0)
	g.now = func() time.Time { return clock }
	before := g.Limit()
	// Two rounds of starts at 100 ms each with others waiting: the
	// first is the reference, after which slow start doubles.
	var held []*Work
	for range before {
		w := gateWork(t)
		if !g.take(w) {
			t.Fatal("a start was parked below the limit")
		}
		held = append(held, w)
	}
	for range 2 * before {
		g.take(gateWork(t)) // wait: every start that ends has others behind it
	}
	for _, w := range held {
		clock = clock.Add(25 * time.Millisecond)
		w.runtimeTime = 100 * time.Millisecond
		g.done(w, true)
	}
	if g.Limit() != 4*before {
		t.Fatalf("limit = %d after a limited round, want %d (slow start)", g.Limit(), 4*before)
	}
	// Failed passes, and those that did no runtime work, teach nothing.
	for range 16 {
		w := gateWork(t)
		if g.take(w) {
			g.done(w, false)
		}
		w = gateWork(t)
		if g.take(w) {
			g.done(w, true)
		}
	}
	if g.Limit() != 4*before {
		t.Fatalf("limit = %d after passes without runtime work, want it unchanged", g.Limit())
	}
}
