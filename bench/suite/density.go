package main

import (
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/podline/podline/bench/internal/procstat"
	"github.com/podline/podline/bench/internal/result"
)

// runtimeCPU returns the runtime's CPU seconds so far: the fake CRI
// process, or containerd and its shims.
type runtimeCPU func() float64

// density hands n pods to a at once and waits until all are Running. The
// pods stay for the scenarios that follow (idle, churn).
func density(ctx context.Context, a agent, rt runtimeCPU, k result.Key, w *podWriter, label string) (result.Density, error) {
	res := result.Density{Key: k}
	before, err := procstat.Read(a.pid(), false)
	if err != nil {
		return res, err
	}
	rt0 := rt()
	names := make([]string, k.Pods)
	start := time.Now()
	for i := range names {
		if names[i], err = w.add(fmt.Sprintf("bench-%05d", i)); err != nil {
			return res, err
		}
	}
	progress("%s: %d manifests written in %.2fs", label, k.Pods, time.Since(start).Seconds())
	wt := newWatcher(a, k.Pods)
	timeout := 2*time.Minute + time.Duration(k.Pods)*20*time.Millisecond
	if err := wt.allRunning(ctx, label, names, timeout); err != nil {
		return res, err
	}
	after, err := procstat.Read(a.pid(), true)
	if err != nil {
		return res, err
	}
	res.RuntimeCPUSec = rt() - rt0
	res.CPUSec = after.CPUSeconds() - before.CPUSeconds()
	res.KernelCPUSec = float64(after.SysTicks-before.SysTicks) / procstat.ClockTicks
	res.PeakRSSMiB = float64(after.HWM) / (1 << 20)
	res.RSSPerPodKiB = (float64(after.RSS) - float64(before.RSS)) / 1024 / float64(k.Pods)
	res.Threads = len(after.Threads)
	var last time.Time
	res.StartupMs = make([]float64, 0, len(names))
	for _, n := range names {
		at := wt.running[n]
		if at.After(last) {
			last = at
		}
		// Rounded to 10 µs: finer is noise, and it keeps suite.json small.
		res.StartupMs = append(res.StartupMs, math.Round(ms(at.Sub(w.written[n]))*100)/100)
	}
	slices.Sort(res.StartupMs)
	res.Startup = quantiles(res.StartupMs)
	res.AllRunningSec = last.Sub(start).Seconds()
	if res.AllRunningSec > 0 {
		res.PodsPerSec = float64(k.Pods) / res.AllRunningSec
	}
	res.PollIntervalMs = ms(wt.interval)
	if wt.polls > 0 {
		// The mean gap, which the agent's answer time may have stretched.
		res.PollIntervalMs = ms(time.Since(start)) / float64(wt.polls)
	}
	if per, err := pollCost(ctx, a); err == nil {
		res.PollCPUSec = per * float64(wt.polls)
	} else {
		progress("%s: poll cost not measured: %v", label, err)
	}
	progress("%s: all %d Running in %.2fs (%.0f pods/s), startup p50 %.0f ms p99 %.0f ms, CPU %.2fs (polls ~%.2fs), peak RSS %.0f MiB",
		label, k.Pods, res.AllRunningSec, res.PodsPerSec, res.Startup.P50, res.Startup.P99, res.CPUSec, res.PollCPUSec, res.PeakRSSMiB)
	return res, nil
}

// pollCost is the agent's CPU seconds per GET /pods, from a few polls in a
// row with nothing else going on.
func pollCost(ctx context.Context, a agent) (float64, error) {
	const n = 5
	c0, err := procstat.Read(a.pid(), true)
	if err != nil {
		return 0, err
	}
	for range n {
		if _, _, err := a.client().Pods(ctx); err != nil {
			return 0, err
		}
	}
	c1, err := procstat.Read(a.pid(), true)
	if err != nil {
		return 0, err
	}
	run, _ := c1.Since(c0)
	return float64(run) / 1e9 / n, nil
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// quantiles of sorted samples (nearest rank).
func quantiles(sorted []float64) result.Quantiles {
	if len(sorted) == 0 {
		return result.Quantiles{}
	}
	at := func(q float64) float64 {
		i := int(q*float64(len(sorted))+0.5) - 1
		return sorted[min(max(i, 0), len(sorted)-1)]
	}
	return result.Quantiles{P50: at(0.50), P90: at(0.90), P99: at(0.99), Max: sorted[len(sorted)-1]}
}
