package main

import (
	"context"
	"time"

	"github.com/podline/podline/bench/internal/procstat"
	"github.com/podline/podline/bench/internal/result"
)

// idle measures a with its pods running and nothing changing: nobody polls
// it during the window.
func idle(ctx context.Context, a agent, rt runtimeCPU, k result.Key, settle, window time.Duration, label string) (result.Idle, error) {
	res := result.Idle{Key: k}
	if err := sleep(ctx, settle); err != nil {
		return res, err
	}
	c0, err := procstat.Read(a.pid(), true)
	if err != nil {
		return res, err
	}
	rt0 := rt()
	t0 := time.Now()
	if err := sleep(ctx, window); err != nil {
		return res, err
	}
	if a.exited() {
		return res, a.errExited()
	}
	c1, err := procstat.Read(a.pid(), true)
	if err != nil {
		return res, err
	}
	secs := time.Since(t0).Seconds()
	run, sw := c1.Since(c0)
	res.WindowSec = secs
	res.CPUPercent = 100 * float64(run) / 1e9 / secs
	res.WakeupsPerSec = float64(sw) / secs
	res.RSSMiB = float64(c1.RSS) / (1 << 20)
	res.RuntimeCPUPercent = 100 * (rt() - rt0) / secs
	progress("%s: idle %.3f%% of a core, %.0f wakeups/s, RSS %.0f MiB; runtime %.2f%%",
		label, res.CPUPercent, res.WakeupsPerSec, res.RSSMiB, res.RuntimeCPUPercent)
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
