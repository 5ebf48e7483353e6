package stages

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// submit starts a pass for rec, or marks one pending if a pass is in
// flight, or leaves it to the retry while rec backs off from a failed
// pass. It parks while the window is full.
func (p *Pipeline) submit(rec *podRecord) {
	rec.mu.Lock()
	if rec.inFlight {
		rec.pending = true
		rec.mu.Unlock()
		return
	}
	if wait := rec.hold.wait(rec.tearingDown(), time.Now()); wait > 0 {
		rec.mu.Unlock()
		// The retry the failed pass asked for starts the pass; asking
		// again keeps it when a wake-up took that request's place.
		passesHeld.Inc()
		p.retry.After(rec.uid, wait)
		return
	}
	rec.inFlight = true
	rec.mu.Unlock()

	<-p.started
	if !p.acquire() {
		rec.mu.Lock()
		rec.inFlight = false
		rec.mu.Unlock()
		return
	}
	rec.mu.Lock()
	w := rec.startPassLocked(p.ctx, time.Now(), p.turns, p.cfg.Cache)
	rec.mu.Unlock()
	passesTotal.Inc()
	p.enqueue(w)
}

// acquire takes an in-flight slot, parking while none is free. It fails
// only when podline stops.
func (p *Pipeline) acquire() bool {
	select {
	case p.gate <- struct{}{}:
		passesInFlight.Inc()
		return true
	case <-p.ctx.Done():
		return false
	}
}

func (p *Pipeline) release() {
	<-p.gate
	passesInFlight.Dec()
}

// enqueue hands w to its current stage. The window guarantees room: never
// more passes than cells in any queue. The lock-free ring can still refuse
// for a moment, when a consumer was descheduled between claiming a cell and
// freeing it and the ring has come round to that cell; Put then parks
// until that consumer frees it, which it does without waiting on anything.
// It fails only when podline stops, and the pass is dropped with it.
func (p *Pipeline) enqueue(w *Work) {
	if p.cfg.Starts != nil && !p.passStartGate(w) {
		return
	}
	s := w.Stage()
	w.enqueuedAt = time.Now()
	if !p.queues[s].TryPut(w) {
		queueRefusals.Inc()
		if err := p.queues[s].Put(p.ctx, w); err != nil {
			p.abandon(w)
			return
		}
	}
	stageQueueDepth[s].Inc()
}

// passStartGate takes a start's place at the gate as it enters the
// sandbox stage and gives it up as it leaves the containers stage. It
// returns false when w waits at the gate, which hands it on later.
func (p *Pipeline) passStartGate(w *Work) bool {
	s := w.Stage()
	inside := !w.Teardown && (s == StageSandbox || s == StageContainers)
	switch {
	case inside && !w.start.held && w.ctx.Err() == nil:
		return p.cfg.Starts.take(w)
	case !inside && w.start.held:
		p.leaveStartGate(w)
	}
	return true
}

// leaveStartGate gives up w's place and hands the passes it lets in to
// their stage.
func (p *Pipeline) leaveStartGate(w *Work) {
	for _, in := range p.cfg.Starts.done(w, w.err == nil) {
		p.enqueue(in)
	}
}

func (p *Pipeline) worker(ctx context.Context, s StageID) {
	q := p.queues[s]
	h := p.cfg.Handlers[s]
	for {
		w, err := q.Take(ctx)
		if err != nil {
			return
		}
		stageQueueDepth[s].Dec()
		start := time.Now()
		stageQueueWait[s].Update(start.Sub(w.enqueuedAt).Seconds())
		out := h.Handle(w)
		stageDuration[s].UpdateDuration(start)
		p.advance(w, out)
	}
}

// advance moves w on after its stage returned out.
func (p *Pipeline) advance(w *Work, out Outcome) {
	if out.Async != nil {
		w.asyncRounds++
		if w.asyncRounds <= maxAsyncRounds {
			passesAsync.Inc()
			// Waiting out a grace period is not runtime work: the
			// place goes to the next start, and is taken again after.
			if w.start.held {
				p.leaveStartGate(w)
			}
			p.release()
			go p.runAsync(w, out.Async)
			return
		}
		out = Fail(fmt.Errorf("%s: %w after %d background steps", w.Stage(), errNotConverging, maxAsyncRounds))
	}
	if out.Err != nil {
		p.failStep(w, out.Err)
		return
	}
	next := w.step + 1
	if out.skip {
		next = w.indexOf(out.SkipTo)
	}
	p.moveTo(w, next)
}

func (w *Work) indexOf(s StageID) int {
	if i := slices.Index(w.route[w.step+1:], s); i >= 0 {
		return w.step + 1 + i
	}
	return len(w.route)
}

func (p *Pipeline) moveTo(w *Work, step int) {
	w.step = step
	if w.step >= len(w.route) {
		p.finish(w)
		return
	}
	p.enqueue(w)
}

// failStep records a failure and sends the pass to the status stage, so
// the failure shows in the pod's status, then to a retry.
func (p *Pipeline) failStep(w *Work, err error) {
	s := w.Stage()
	if w.err == nil {
		w.err = fmt.Errorf("%s: %w", s, err)
	}
	if w.ctx.Err() == nil || p.ctx.Err() != nil {
		stageFailures[s].Inc()
	}
	if s == StageStatus {
		p.finish(w)
		return
	}
	p.moveTo(w, w.indexOf(StageStatus))
}

// runAsync does a stage's slow work outside the window, then returns the
// pass to the same stage to re-plan.
func (p *Pipeline) runAsync(w *Work, fn func(context.Context) error) {
	err := fn(w.ctx)
	if !p.acquire() {
		p.abandon(w)
		return
	}
	if err != nil {
		p.failStep(w, err)
		return
	}
	p.enqueue(w)
}

// abandon drops a pass when podline stops.
func (p *Pipeline) abandon(w *Work) {
	if w.start.held {
		p.cfg.Starts.done(w, false)
	}
	w.cancel()
	w.rec.mu.Lock()
	w.rec.inFlight = false
	w.rec.mu.Unlock()
}

// finish ends a pass: it starts the pending one, or frees the slot and
// schedules a retry or a requested re-run. After a failure the pending
// pass, if of the same kind, waits for the retry (see passHold).
func (p *Pipeline) finish(w *Work) {
	if w.start.held {
		// Routes end in the status stage; this is for a route that
		// one day does not.
		p.leaveStartGate(w)
	}
	rec, s := w.rec, w.Sync
	superseded := errors.Is(w.ctx.Err(), context.Canceled) && p.ctx.Err() == nil
	w.cancel()
	var delay time.Duration
	switch {
	case w.err == nil:
		s.Failures = 0
		delay = w.requeueAfter
	case !superseded:
		s.Failures++
		delay = stepBackoff(s.Failures)
		p.cfg.Log.Warn("pod sync failed", "pod", w.PodName(), "uid", w.UID,
			"err", w.err, "retry_in", delay)
	}
	delay = untilDeadline(w, delay)
	s.LastErr = w.err
	tornDown := w.Teardown && w.err == nil
	now := time.Now()

	rec.mu.Lock()
	rec.cancel = nil
	rec.hold = holdAfter(w.err != nil && !superseded, w.Teardown, delay, now)
	wake := p.endTurnLocked(w, tornDown)
	if rec.pending && p.ctx.Err() == nil && rec.hold.wait(rec.tearingDown(), now) == 0 {
		next := rec.startPassLocked(p.ctx, time.Now(), p.turns, p.cfg.Cache)
		rec.mu.Unlock()
		if tornDown && p.cfg.OnTornDown != nil {
			p.cfg.OnTornDown(w.UID, w.Removed)
		}
		p.wake(wake)
		passesTotal.Inc()
		p.enqueue(next)
		return
	}
	if rec.pending {
		// Held: the retry below starts the pass when the back-off ends.
		rec.pending = false
		passesHeld.Inc()
	}
	rec.inFlight = false
	forget := tornDown && rec.removed
	rec.mu.Unlock()
	p.release()

	if tornDown && p.cfg.OnTornDown != nil {
		p.cfg.OnTornDown(w.UID, w.Removed)
	}
	p.wake(wake)
	switch {
	case forget:
		p.forget(rec)
	case delay > 0:
		p.retry.After(rec.uid, delay)
	}
}

// untilDeadline shortens delay, the wait before the pod's next pass, to
// the time left before its active deadline, and asks for that pass when
// nothing else did. A pod waiting for its deadline costs one entry in the
// retry queue and no goroutine or timer of its own; whichever request is
// earliest wins (the queue keeps one per pod), and every pass arms the
// deadline again, so a back-off retry or a runtime event in between never
// loses it. A pod past its deadline needs no more passes from it.
func untilDeadline(w *Work, delay time.Duration) time.Duration {
	if w.Teardown || w.Sync.Rejection != nil {
		return delay
	}
	left, ok := DeadlineLeft(w.Pod, w.Sync.Started, time.Now())
	if ok && left > 0 && (delay <= 0 || left < delay) {
		return left
	}
	return delay
}

// endTurnLocked gives up a static pod's turn once its teardown has
// finished, or once admission rejected it, and returns the pod of the same
// name to wake: the next in line. Callers hold w.rec.mu.
func (p *Pipeline) endTurnLocked(w *Work, tornDown bool) (wake types.UID) {
	rec := w.rec
	if rec.staticName == "" {
		return ""
	}
	if w.Sync.Rejection != nil && !rec.rejected {
		rec.rejected = true
		return p.turns.release(rec.staticName, rec.uid, false)
	}
	if !tornDown {
		return ""
	}
	wake = p.turns.release(rec.staticName, rec.uid, !rec.tearingDown() && !rec.rejected)
	if wake == rec.uid {
		// Wanted again and next in line: the pending pass takes the turn.
		wake = ""
	}
	return wake
}

// PodName names the pod for logs: namespace/name.
func (w *Work) PodName() string {
	if w.Pod != nil {
		return w.Pod.Namespace + "/" + w.Pod.Name
	}
	return w.Sync.OrphanNamespace + "/" + w.Sync.OrphanName
}
