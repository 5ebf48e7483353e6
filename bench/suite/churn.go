package main

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/podline/podline/bench/internal/procstat"
	"github.com/podline/podline/bench/internal/result"
)

// churnSpec is how pods are replaced while the others stay.
type churnSpec struct {
	rate     float64       // pods replaced per second
	duration time.Duration // of the churn
	window   time.Duration // of one reported slice
}

// churn replaces the oldest pod by a new one every 1/rate seconds for
// spec.duration while polling /pods, and reports each window's startup
// latency of the new pods and the agent's CPU. Flat windows mean that a
// start costs the same however long the agent has run.
func churn(ctx context.Context, a agent, k result.Key, w *podWriter, spec churnSpec, label string) (result.Churn, error) {
	res := result.Churn{Key: k, RatePerSec: spec.rate}
	wt := newWatcher(a, k.Pods)
	every := time.Duration(float64(time.Second) / spec.rate)
	start := time.Now()
	nextAdd, nextPoll, nextWindow := start, start, start.Add(spec.window)
	c0, err := procstat.Read(a.pid(), false)
	if err != nil {
		return res, err
	}
	winStart := start
	var added []string
	seq := 0
	for time.Since(start) < spec.duration {
		now := time.Now()
		if !now.Before(nextAdd) {
			if err := w.removeOldest(); err != nil {
				return res, err
			}
			name, err := w.add(fmt.Sprintf("churn-%05d", seq))
			if err != nil {
				return res, err
			}
			seq++
			added = append(added, name)
			nextAdd = nextAdd.Add(every)
		}
		if !now.Before(nextPoll) {
			if _, err := wt.poll(ctx); err != nil {
				return res, err
			}
			nextPoll = time.Now().Add(wt.gap)
		}
		if !now.Before(nextWindow) {
			c1, err := procstat.Read(a.pid(), false)
			if err != nil {
				return res, err
			}
			res.Windows = append(res.Windows, churnWindow(winStart, now, start, c0, c1, wt.running, w.written, added))
			progress("%s: window %d: %d started, p50 %.0f ms, CPU %.1f%%", label, len(res.Windows),
				res.Windows[len(res.Windows)-1].Started, res.Windows[len(res.Windows)-1].Startup.P50, res.Windows[len(res.Windows)-1].CPUPercent)
			c0, winStart = c1, now
			nextWindow = nextWindow.Add(spec.window)
		}
		if err := sleep(ctx, min(time.Until(nextAdd), time.Until(nextPoll), time.Until(nextWindow), 10*time.Millisecond)); err != nil {
			return res, err
		}
	}
	// The last replacements must come up too, or the run failed.
	if err := wt.allRunning(ctx, label, added, time.Minute); err != nil {
		return res, err
	}
	progress("%s: %d pods replaced at %.0f/s", label, len(added), spec.rate)
	return res, nil
}

// churnWindow sums up the pods that turned Running in [from, to).
func churnWindow(from, to, origin time.Time, c0, c1 procstat.Cost, running, written map[string]time.Time, added []string) result.ChurnWindow {
	var lat []float64
	for _, n := range added {
		at, ok := running[n]
		if ok && !at.Before(from) && at.Before(to) {
			lat = append(lat, ms(at.Sub(written[n])))
		}
	}
	slices.Sort(lat)
	secs := to.Sub(from).Seconds()
	return result.ChurnWindow{
		StartSec:   from.Sub(origin).Seconds(),
		Started:    len(lat),
		Startup:    quantiles(lat),
		CPUPercent: 100 * (c1.CPUSeconds() - c0.CPUSeconds()) / secs,
		RSSMiB:     float64(c1.RSS) / (1 << 20),
	}
}
