package stages

import (
	"errors"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// A pod whose step keeps failing waits out its step back-off before each
// retry, even while runtime events and source updates keep asking for
// passes: they used to start a pass at once, the pending one right after
// the failed pass ended, so a failing pod under events never backed off.
func TestFailedPassWaitsOutStepBackoffUnderEvents(t *testing.T) {
	var (
		mu     sync.Mutex
		starts []time.Time // each sync pass reaching the sandbox stage
		ends   []time.Time // each failed pass reaching the status stage
	)
	const retries = 2
	reached := make(chan struct{})
	next := HandlerFunc(func(w *Work) Outcome { return Next() })
	var handlers [NumStages]Handler
	var workers [NumStages]int
	for s := range handlers {
		handlers[s], workers[s] = next, 2
	}
	handlers[StageSandbox] = HandlerFunc(func(w *Work) Outcome {
		if w.Teardown {
			return Next()
		}
		mu.Lock()
		defer mu.Unlock()
		starts = append(starts, time.Now())
		if len(starts) == retries+1 {
			close(reached)
		}
		return Fail(errors.New("runtime busy"))
	})
	handlers[StageStatus] = HandlerFunc(func(w *Work) Outcome {
		if w.Err() != nil && !w.Teardown {
			mu.Lock()
			ends = append(ends, time.Now())
			mu.Unlock()
		}
		return Next()
	})
	p, err := New(Config{Window: 4, Workers: workers, Handlers: handlers,
		Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	runPipeline(t, p)

	pod := unitPod()
	p.Upsert(pod)
	stop := make(chan struct{})
	var events sync.WaitGroup
	events.Add(1)
	go func() {
		defer events.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if i%2 == 0 {
				p.Sync(pod.UID)
			} else {
				p.Upsert(pod)
			}
			time.Sleep(time.Millisecond)
		}
	}()
	select {
	case <-reached:
	case <-time.After(30 * time.Second):
		t.Fatal("the failing step was never retried")
	}
	close(stop)
	events.Wait()

	mu.Lock()
	defer mu.Unlock()
	for i := range retries {
		waited := starts[i+1].Sub(ends[i])
		if want := stepBackoff(i + 1); waited < want {
			t.Errorf("retry %d started %s after failure %d ended, want at least the step back-off %s",
				i+1, waited, i+1, want)
		}
	}
}

// A teardown asked for while the pod backs off from a failed start goes at
// once: the back-off is for retrying the same thing, and stopping a pod
// must not wait behind its failed start.
func TestTeardownDoesNotWaitOutStartBackoff(t *testing.T) {
	tornDown := make(chan struct{})
	p, failed := failingStartPipeline(t, func(_ types.UID, removed bool) {
		if removed {
			close(tornDown)
		}
	})
	pod := unitPod()
	p.Upsert(pod)
	<-failed
	waitHeld(p, pod.UID)
	before := passesTotal.Get()
	p.Remove(pod.UID)
	// A pass that is not held starts before Remove returns.
	if passesTotal.Get() == before {
		t.Fatal("Remove during the start's back-off did not start the teardown")
	}
	<-tornDown
}

// failingStartPipeline runs a pipeline whose sandbox stage fails every
// start (a teardown passes); failed receives when a failed start reaches
// the status stage.
func failingStartPipeline(t *testing.T, onTornDown func(types.UID, bool)) (*Pipeline, <-chan struct{}) {
	t.Helper()
	failed := make(chan struct{}, 1)
	next := HandlerFunc(func(w *Work) Outcome { return Next() })
	var handlers [NumStages]Handler
	var workers [NumStages]int
	for s := range handlers {
		handlers[s], workers[s] = next, 1
	}
	handlers[StageSandbox] = HandlerFunc(func(w *Work) Outcome {
		if w.Teardown {
			return Next()
		}
		return Fail(errors.New("runtime busy"))
	})
	handlers[StageStatus] = HandlerFunc(func(w *Work) Outcome {
		if w.Err() != nil && !w.Teardown {
			select {
			case failed <- struct{}{}:
			default:
			}
		}
		return Next()
	})
	p, err := New(Config{Window: 4, Workers: workers, Handlers: handlers,
		Log: slog.New(slog.NewTextHandler(io.Discard, nil)), OnTornDown: onTornDown})
	if err != nil {
		t.Fatal(err)
	}
	runPipeline(t, p)
	return p, failed
}

// waitHeld waits for uid's failed pass to end and leave its hold: the
// status stage reports the failure just before that.
func waitHeld(p *Pipeline, uid types.UID) {
	p.mu.Lock()
	rec := p.records[uid]
	p.mu.Unlock()
	for {
		rec.mu.Lock()
		held := !rec.inFlight && !rec.hold.until.IsZero()
		rec.mu.Unlock()
		if held {
			return
		}
		time.Sleep(time.Millisecond)
	}
}

func TestPassHold(t *testing.T) {
	now := time.Now()
	f := func(h passHold, teardown bool, at time.Time, want time.Duration) {
		t.Helper()
		if got := h.wait(teardown, at); got != want {
			t.Errorf("%+v.wait(teardown=%v, now+%s) = %s, want %s", h, teardown, at.Sub(now), got, want)
		}
	}
	sec := time.Second
	// No failure, no hold.
	f(holdAfter(false, false, sec, now), false, now, 0)
	f(holdAfter(false, false, 0, now), false, now, 0)
	// A superseded or deadline-free failure that asked for no retry.
	f(holdAfter(true, false, 0, now), false, now, 0)
	// A failed sync holds the next sync until its retry.
	f(holdAfter(true, false, sec, now), false, now, sec)
	f(holdAfter(true, false, sec, now), false, now.Add(sec/4), 3*sec/4)
	f(holdAfter(true, false, sec, now), false, now.Add(sec), 0)
	f(holdAfter(true, false, sec, now), false, now.Add(time.Hour), 0)
	// ...but not a teardown.
	f(holdAfter(true, false, sec, now), true, now, 0)
	// A failed teardown holds the next teardown, not a sync of a pod
	// that came back.
	f(holdAfter(true, true, sec, now), true, now, sec)
	f(holdAfter(true, true, sec, now), false, now, 0)
}

func TestHoldOnUpdate(t *testing.T) {
	now := time.Now()
	held := holdAfter(true, false, time.Minute, now)
	gen := func(g int64) *v1.Pod { p := unitPod(); p.Generation = g; return p }
	for _, c := range []struct {
		name       string
		prev, next *v1.Pod
		lifted     bool
	}{
		{"same generation: a status write coming back", gen(1), gen(1), false},
		{"new generation: a new spec", gen(1), gen(2), true},
		{"static pods carry none", gen(0), gen(0), false},
		{"first delivery", nil, gen(1), false},
	} {
		got := holdOnUpdate(held, c.prev, c.next)
		if lifted := got.until.IsZero(); lifted != c.lifted {
			t.Errorf("%s: hold lifted = %v, want %v", c.name, lifted, c.lifted)
		}
	}
}

// A new spec delivered while the pod backs off from a failed pass starts
// its pass before Upsert returns, as Remove does for a teardown.
func TestNewGenerationDoesNotWaitOutBackoff(t *testing.T) {
	p, failed := failingStartPipeline(t, nil)
	pod := unitPod()
	pod.Generation = 1
	p.Upsert(pod)
	<-failed
	waitHeld(p, pod.UID)
	before := passesTotal.Get()
	p.Upsert(pod) // the same spec again: held
	if passesTotal.Get() != before {
		t.Fatal("an update that changed nothing started a pass during the back-off")
	}
	edited := pod.DeepCopy()
	edited.Generation = 2
	p.Upsert(edited)
	if passesTotal.Get() == before {
		t.Fatal("a new generation during the back-off did not start its pass")
	}
}
