package main

import (
	"fmt"
	"os"
	"time"
)

// convBreakdown splits a containerd case's convergence into the steps of
// the pods removed and added during the outage, each in seconds after
// containerd answered again: podline's share (its back-off, its
// reconnection, when it calls) apart from containerd's (how long the
// calls take).
type convBreakdown struct {
	// ReconnectSec: podline's event stream back and relisted, which
	// releases the pods held back by the outage; below 0 when podline's
	// first call came through before the suite's; nil: not in its log.
	ReconnectSec *float64 `json:"reconnect_sec,omitempty"`
	// BootedSec: containerd's log says it booted, against the suite's
	// check; nil: not in its log.
	BootedSec *float64   `json:"containerd_booted_sec,omitempty"`
	Added     []convStep `json:"added"`
	Removed   []convStep `json:"removed"`
	// Failed passes of those pods after containerd answered: all of
	// them, and the most one pod had.
	FailuresAfterUp int `json:"sync_failures_after_up"`
	FailuresMaxPod  int `json:"sync_failures_after_up_max_pod"`
}

// convStep is one step over the pods it concerns.
type convStep struct {
	Step      string  `json:"step"`
	Pods      int     `json:"pods"` // of Of, how many reached it
	Of        int     `json:"of"`
	MedianSec float64 `json:"median_sec"`
	MaxSec    float64 `json:"max_sec"`
	Slowest   string  `json:"slowest,omitempty"`
}

var (
	addedSteps   = []string{stepRetryDue, stepRunSandbox, stepSandboxUp, stepStarted, stepRunning, stepConverged}
	removedSteps = []string{stepRetryDue, stepStopCalled, stepStopDone, stepStopped, stepRemoved, stepGone}
)

// convLooks follows the suite's looks during the convergence: for each
// pod, when it was last found as wanted after being found otherwise.
type convLooks map[string]time.Time // zero: not as wanted at the last look

func newConvLooks(pods ...[]string) convLooks {
	c := convLooks{}
	for _, ps := range pods {
		for _, p := range ps {
			c[p] = time.Time{}
		}
	}
	return c
}

func (c convLooks) look(at time.Time, vs []violation) {
	bad := map[string]bool{}
	for _, v := range vs {
		bad[v.pod] = true
	}
	for p, t := range c {
		switch {
		case bad[p]:
			c[p] = time.Time{}
		case t.IsZero():
			c[p] = at
		}
	}
}

// relBreakdown reads the two logs (containerd's from offset, where the
// outage began) into t and returns the breakdown.
func relBreakdown(t *podTimeline, looks convLooks, ctrdLog string, offset int64, podlineLog string, down, up time.Time, added, removed []string) (*convBreakdown, error) {
	f, err := os.Open(ctrdLog)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if _, err := f.Seek(offset, 0); err != nil {
		return nil, err
	}
	if err := t.readContainerd(f); err != nil {
		return nil, fmt.Errorf("containerd log: %w", err)
	}
	p, err := os.Open(podlineLog)
	if err != nil {
		return nil, err
	}
	defer p.Close()
	if err := t.readPodline(p, down, up); err != nil {
		return nil, fmt.Errorf("podline log: %w", err)
	}
	for _, pod := range added {
		if at := looks[pod]; !at.IsZero() {
			t.saw(pod, stepConverged, at)
		}
	}
	for _, pod := range removed {
		if at := looks[pod]; !at.IsZero() {
			t.saw(pod, stepGone, at)
		}
	}
	return t.breakdown(up, added, removed), nil
}

func (t *podTimeline) breakdown(up time.Time, added, removed []string) *convBreakdown {
	b := &convBreakdown{ReconnectSec: since(t.reconnect, up), BootedSec: since(t.booted, up)}
	for _, s := range addedSteps {
		b.Added = append(b.Added, t.step(s, added, up))
	}
	for _, s := range removedSteps {
		b.Removed = append(b.Removed, t.step(s, removed, up))
	}
	for _, ps := range [][]string{added, removed} {
		for _, p := range ps {
			b.FailuresAfterUp += t.failures[p]
			b.FailuresMaxPod = max(b.FailuresMaxPod, t.failures[p])
		}
	}
	return b
}

// step is the median and the slowest of pods at step.
func (t *podTimeline) step(step string, pods []string, up time.Time) convStep {
	s := convStep{Step: step, Of: len(pods)}
	var xs []float64
	for _, p := range pods {
		at, ok := t.at(p, step)
		if !ok {
			continue
		}
		d := at.Sub(up).Seconds()
		if len(xs) == 0 || d > s.MaxSec {
			s.MaxSec, s.Slowest = d, p
		}
		xs = append(xs, d)
	}
	s.Pods = len(xs)
	s.MedianSec, _, _ = median(xs)
	return s
}

// since is at in seconds after up; nil when at is zero.
func since(at, up time.Time) *float64 {
	if at.IsZero() {
		return nil
	}
	x := at.Sub(up).Seconds()
	return &x
}
