package stages

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/VictoriaMetrics/metrics"
)

// StartGate lets pod starts into the sandbox and containers stages a few
// at a time, in the order they reach it, so that on a busy runtime pods
// finish one after another instead of all together at the end. The number
// comes from a StartLimit fed with each start's runtime time, or is fixed.
//
// A start holds its place from the sandbox stage until its pass leaves the
// containers stage. Teardown passes never wait here: stopping frees the
// runtime. A start that holds its place longer than stallAfter (an image
// pull, a runtime call that hangs) stops counting against the limit, so a
// slow pod never stalls the others; it still finishes its pass.
type StartGate struct {
	mu     sync.Mutex
	limit  *StartLimit // nil: fixed
	fixed  int
	held   []*Work // passes holding a place, stalled ones included
	active int     // held and not stalled
	parked []*Work // FIFO; parked[head:] wait
	head   int
	timer  *time.Timer
	// admit hands a pass let through by a timer (a stalled start) to its
	// stage; set by the pipeline.
	admit func(*Work)
	now   func() time.Time
	// stall, when set, replaces stallAfter's (tests); most is the
	// high-water mark of active, for tests.
	stall time.Duration
	most  int
}

// stallAfter bounds how long a start counts against the limit: ten times
// the runtime's base start time, within [2 s, 30 s], and 10 s before the
// first sample.
func (g *StartGate) stallAfter() time.Duration {
	if g.stall > 0 {
		return g.stall
	}
	if g.limit == nil || g.limit.Base() == 0 {
		return 10 * time.Second
	}
	return min(max(10*g.limit.Base(), 2*time.Second), 30*time.Second)
}

var (
	startLimitGauge = metrics.NewGauge(`podline_start_limit`, nil)
	startsParked    = metrics.NewGauge(`podline_starts_waiting`, nil)
	startsStalled   = metrics.NewCounter(`podline_starts_stalled_total`)
)

// NewAdaptiveStartGate returns a gate whose limit adapts between
// startLimitMin and most.
func NewAdaptiveStartGate(most int) *StartGate {
	g := &StartGate{limit: NewStartLimit(most), now: time.Now}
	startLimitGauge.Set(float64(g.limit.Limit()))
	return g
}

// NewFixedStartGate returns a gate that lets n starts in at once.
func NewFixedStartGate(n int) *StartGate {
	g := &StartGate{fixed: max(n, 1), now: time.Now}
	startLimitGauge.Set(float64(g.fixed))
	return g
}

func (g *StartGate) current() int {
	if g.limit == nil {
		return g.fixed
	}
	return g.limit.Limit()
}

// Limit is the number of starts let in at once now.
func (g *StartGate) Limit() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.current()
}

// take lets w in, or parks it and returns false: done or the stall timer
// hands it on later.
func (g *StartGate) take(w *Work) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.active < g.current() && g.head == len(g.parked) {
		g.holdLocked(w, g.now())
		return true
	}
	g.parked = append(g.parked, w)
	startsParked.Inc()
	// A pass cancelled while it waits (its pod is being deleted) goes on
	// at once: its stages fail it fast, and the teardown waits for it.
	w.start.stopWait = context.AfterFunc(w.ctx, func() { g.unpark(w) })
	g.armLocked()
	return false
}

// unpark hands on w, cancelled while it waited, without a place.
func (g *StartGate) unpark(w *Work) {
	g.mu.Lock()
	i := slices.Index(g.parked[g.head:], w)
	if i < 0 {
		g.mu.Unlock()
		return
	}
	g.parked = slices.Delete(g.parked, g.head+i, g.head+i+1)
	startsParked.Dec()
	admit := g.admit
	g.mu.Unlock()
	admit(w)
}

func (g *StartGate) holdLocked(w *Work, now time.Time) {
	if w.start.stopWait != nil {
		w.start.stopWait()
	}
	w.start = startPlace{held: true, at: now}
	g.held = append(g.held, w)
	g.active++
	g.most = max(g.most, g.active)
}

// done gives up w's place. A start that did runtime work and did not
// stall feeds the limit. It returns the parked passes now let in, for the
// caller to hand to their stage.
func (g *StartGate) done(w *Work, ok bool) []*Work {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !w.start.held {
		return nil
	}
	for i, h := range g.held {
		if h == w {
			g.held[i] = g.held[len(g.held)-1]
			g.held[len(g.held)-1] = nil
			g.held = g.held[:len(g.held)-1]
			break
		}
	}
	if !w.start.stalled {
		g.active--
		waiting := g.head < len(g.parked)
		if ok && w.runtimeTime > 0 && g.limit != nil && g.limit.Observe(g.now(), w.runtimeTime, waiting) {
			startLimitGauge.Set(float64(g.limit.Limit()))
		}
	}
	w.start = startPlace{}
	return g.letInLocked()
}

// letInLocked moves parked passes in while the limit allows.
func (g *StartGate) letInLocked() []*Work {
	var in []*Work
	now := g.now()
	for g.active < g.current() && g.head < len(g.parked) {
		w := g.parked[g.head]
		g.parked[g.head] = nil
		g.head++
		startsParked.Dec()
		g.holdLocked(w, now)
		in = append(in, w)
	}
	if g.head == len(g.parked) {
		g.parked, g.head = g.parked[:0], 0
	} else if g.head > len(g.parked)/2 && g.head > 64 {
		n := copy(g.parked, g.parked[g.head:])
		clear(g.parked[n:])
		g.parked, g.head = g.parked[:n], 0
	}
	return in
}

// armLocked makes sure a timer will look for stalled starts while passes
// wait: at the moment the oldest held start would stall.
func (g *StartGate) armLocked() {
	if g.timer != nil || g.head == len(g.parked) {
		return
	}
	var oldest time.Time
	for _, h := range g.held {
		if !h.start.stalled && (oldest.IsZero() || h.start.at.Before(oldest)) {
			oldest = h.start.at
		}
	}
	if oldest.IsZero() {
		return
	}
	g.timer = time.AfterFunc(max(oldest.Add(g.stallAfter()).Sub(g.now()), 0), g.checkStalls)
}

// checkStalls stops counting the starts that held their place too long,
// and lets parked passes in for them.
func (g *StartGate) checkStalls() {
	g.mu.Lock()
	g.timer = nil
	now := g.now()
	after := g.stallAfter()
	for _, h := range g.held {
		if !h.start.stalled && now.Sub(h.start.at) >= after {
			h.start.stalled = true
			g.active--
			startsStalled.Inc()
		}
	}
	in := g.letInLocked()
	g.armLocked()
	admit := g.admit
	g.mu.Unlock()
	for _, w := range in {
		admit(w)
	}
}

// stop ends the stall timer (podline stops).
func (g *StartGate) stop() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.timer != nil {
		g.timer.Stop()
		g.timer = nil
	}
}

// startPlace is a pass's place at the gate, guarded by the gate's mutex.
type startPlace struct {
	held    bool
	stalled bool
	at      time.Time
	// stopWait ends the watch on a waiting pass's context.
	stopWait func() bool
}
