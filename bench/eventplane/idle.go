package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/podline/podline/bench/internal/procstat"
)

type idleResult struct {
	Pods    int     `json:"pods"`
	StartS  float64 `json:"all_running_s"`
	WindowS float64 `json:"window_s"`
	// CPU in % of one core, from utime+stime ticks.
	PodlineCPUPct    float64 `json:"podline_cpu_pct"`
	ContainerdCPUPct float64 `json:"containerd_cpu_pct"`
	// The same from the threads' schedstat run time (ns resolution).
	PodlineSchedCPUPct    float64 `json:"podline_schedstat_cpu_pct"`
	ContainerdSchedCPUPct float64 `json:"containerd_schedstat_cpu_pct"`
	PodlineCtxSwPerS      float64 `json:"podline_ctx_switches_per_s"`
	ContainerdCtxSwPerS   float64 `json:"containerd_ctx_switches_per_s"`
	PodlineThreads        int     `json:"podline_threads"`
	// Sandboxes of other users of the runtime during the window: their
	// containers add to containerd's cost.
	ForeignSandboxes int                `json:"foreign_sandboxes"`
	LoadAvgBefore    string             `json:"loadavg_before"`
	LoadAvgAfter     string             `json:"loadavg_after"`
	Metrics          map[string]float64 `json:"podline_metrics"`
}

// idle runs N pods under a fresh podline and measures what podline and
// containerd cost while nothing happens.
func (b *bench) idle(ctx context.Context, mode string, n int) (res *idleResult, err error) {
	label := fmt.Sprintf("idle%d/%s", n, mode)
	a, err := b.startAgent(ctx, label, mode)
	if err != nil {
		return nil, err
	}
	defer func() {
		if terr := b.teardown(ctx, a); err == nil {
			err = terr
		}
	}()
	start := time.Now()
	names, err := a.writePods(fmt.Sprintf("idle%d-%s", n, mode), n)
	if err != nil {
		return nil, err
	}
	if _, err := a.waitRunning(ctx, names, b.saw); err != nil {
		return nil, err
	}
	res = &idleResult{Pods: n, StartS: time.Since(start).Seconds()}
	progress("%s: settling %s, then an idle window of %s", label, b.cfg.settle, b.cfg.idleWindow)
	if err := sleep(ctx, b.cfg.settle); err != nil {
		return res, err
	}
	res.ForeignSandboxes = b.foreignSandboxes(ctx)
	res.LoadAvgBefore = loadAvg()
	t0 := time.Now()
	p0, err := procstat.Read(a.pid(), true)
	if err != nil {
		return res, fmt.Errorf("%s: podline: %w", label, err)
	}
	c0, err := procstat.Read(b.containerdPID, true)
	if err != nil {
		return res, fmt.Errorf("%s: containerd: %w", label, err)
	}
	if err := sleep(ctx, b.cfg.idleWindow); err != nil {
		return res, err
	}
	p1, err := procstat.Read(a.pid(), true)
	if err != nil {
		return res, fmt.Errorf("%s: podline: %w", label, err)
	}
	c1, err := procstat.Read(b.containerdPID, true)
	if err != nil {
		return res, fmt.Errorf("%s: containerd: %w", label, err)
	}
	window := time.Since(t0).Seconds()
	res.WindowS = window
	res.LoadAvgAfter = loadAvg()
	res.PodlineCPUPct = 100 * float64(p1.Ticks-p0.Ticks) / procstat.ClockTicks / window
	res.ContainerdCPUPct = 100 * float64(c1.Ticks-c0.Ticks) / procstat.ClockTicks / window
	pRun, pSw := p1.Since(p0)
	cRun, cSw := c1.Since(c0)
	res.PodlineSchedCPUPct = 100 * float64(pRun) / 1e9 / window
	res.ContainerdSchedCPUPct = 100 * float64(cRun) / 1e9 / window
	res.PodlineCtxSwPerS = float64(pSw) / window
	res.ContainerdCtxSwPerS = float64(cSw) / window
	res.PodlineThreads = len(p1.Threads)
	progress("%s: podline %.2f%% of a core (%.0f ctx switches/s), containerd %.2f%%",
		label, res.PodlineCPUPct, res.PodlineCtxSwPerS, res.ContainerdCPUPct)
	if res.Metrics, err = a.metrics(ctx); err != nil {
		return res, fmt.Errorf("%s: metrics: %w", label, err)
	}
	return res, nil
}

func sleep(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}

func loadAvg() string {
	b, _ := os.ReadFile("/proc/loadavg")
	return strings.TrimSpace(string(b))
}
