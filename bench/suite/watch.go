package main

import (
	"context"
	"fmt"
	"time"
)

// pollInterval is the shortest gap between two polls of /pods with n
// pods. A poll costs the agent a JSON encoding of every pod, so the gap
// grows with n; and it is at least pollShare times the last poll's own
// duration, so that an agent slow to answer is not kept busy answering:
// the observer holds each agent to about a tenth of its time.
func pollInterval(n int) time.Duration {
	return max(50*time.Millisecond, time.Duration(n)*100*time.Microsecond)
}

const pollShare = 10

// watcher polls an agent's /pods and records when each pod was first seen
// Running.
type watcher struct {
	a        agent
	interval time.Duration // the shortest gap
	gap      time.Duration // the gap after the last poll
	running  map[string]time.Time
	ready    map[string]time.Time // first seen Ready
	polls    int
}

func newWatcher(a agent, n int) *watcher {
	return &watcher{a: a, interval: pollInterval(n), running: map[string]time.Time{}, ready: map[string]time.Time{}}
}

// poll is one GET /pods; it returns how many pods it listed.
func (w *watcher) poll(ctx context.Context) (int, error) {
	start := time.Now()
	pods, at, err := w.a.client().Pods(ctx)
	w.gap = max(w.interval, pollShare*time.Since(start))
	if err != nil {
		if w.a.exited() {
			return 0, w.a.errExited()
		}
		return 0, err
	}
	w.polls++
	for i := range pods {
		p := &pods[i]
		if _, seen := w.running[p.Metadata.Name]; !seen && p.Running() {
			w.running[p.Metadata.Name] = at
		}
		if _, seen := w.ready[p.Metadata.Name]; !seen && p.Ready() {
			w.ready[p.Metadata.Name] = at
		}
	}
	return len(pods), nil
}

// until polls until done says so, printing progress every 2 s; label
// names the case.
func (w *watcher) until(ctx context.Context, label string, timeout time.Duration, done func(listed int) (bool, string)) error {
	start := time.Now()
	last := start
	for {
		listed, err := w.poll(ctx)
		if err != nil {
			return err
		}
		ok, state := done(listed)
		if ok {
			return nil
		}
		if time.Since(last) >= 2*time.Second {
			progress("%s: %s", label, state)
			last = time.Now()
		}
		if time.Since(start) > timeout {
			return fmt.Errorf("%s: not done after %s: %s", label, timeout, state)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(w.gap):
		}
	}
}

// allRunning waits until every pod in names was seen Running.
func (w *watcher) allRunning(ctx context.Context, label string, names []string, timeout time.Duration) error {
	return w.until(ctx, label, timeout, func(int) (bool, string) {
		n := 0
		for _, name := range names {
			if _, ok := w.running[name]; ok {
				n++
			}
		}
		return n == len(names), fmt.Sprintf("%d/%d Running", n, len(names))
	})
}
