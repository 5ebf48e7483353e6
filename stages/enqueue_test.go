package stages

import (
	"context"
	"io"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"
)

// refusingQueue refuses TryPut a number of times, as the lock-free ring
// does while a descheduled consumer still holds the cell it needs.
type refusingQueue struct {
	StageQueue[*Work]
	refusals atomic.Int32
}

func (q *refusingQueue) TryPut(w *Work) bool {
	if q.refusals.Add(-1) >= 0 {
		return false
	}
	return q.StageQueue.TryPut(w)
}

// A stage queue that refuses a pass the window has room for delays it; the
// pass is neither lost nor a crash (it was a panic).
func TestEnqueueWaitsOutARefusal(t *testing.T) {
	p, handled := countingPipeline(t, 4, 1)
	for s := range p.queues {
		q := &refusingQueue{StageQueue: p.queues[s]}
		q.refusals.Store(3)
		p.queues[s] = q
	}
	runPipeline(t, p)

	before := queueRefusals.Get()
	p.Upsert(unitPod())
	want := int64(len(routeFirstSync))
	for deadline := time.Now().Add(10 * time.Second); handled.Load() < want; {
		if time.Now().After(deadline) {
			t.Fatalf("%d stage runs, want %d", handled.Load(), want)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if n := queueRefusals.Get() - before; n == 0 {
		t.Fatal("no refusal was counted")
	}
}

// countingPipeline is a pipeline whose every stage only counts the passes
// through it and moves them on.
func countingPipeline(t *testing.T, window, workersPerStage int) (*Pipeline, *atomic.Int64) {
	t.Helper()
	handled := &atomic.Int64{}
	next := HandlerFunc(func(w *Work) Outcome {
		handled.Add(1)
		return Next()
	})
	var handlers [NumStages]Handler
	var workers [NumStages]int
	for s := range handlers {
		handlers[s], workers[s] = next, workersPerStage
	}
	p, err := New(Config{Window: window, Workers: workers, Handlers: handlers,
		Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	return p, handled
}

// runPipeline runs p until the test ends.
func runPipeline(t *testing.T, p *Pipeline) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { p.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
}
