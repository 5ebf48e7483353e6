package main

import (
	"context"
	"fmt"
	"time"

	"github.com/podline/podline/bench/internal/procstat"
	"github.com/podline/podline/cri"
)

// scaleDelete removes every manifest at once and waits until the fake CRI
// holds no sandbox, in any state, and the agent lists no pod: a pod gone
// from /pods may still have its sandbox in the runtime, and the other way
// round. The runtime is asked first, over the CRI socket: that costs the
// agent nothing, so the delete's CPU holds few polls of /pods. Both
// conditions only ever go from false to true, so checking them one after
// the other finds the moment both hold, to a poll's gap.
func scaleDelete(ctx context.Context, a agent, socket string, w *podWriter, res *scaleRun, label string) error {
	rt, err := cri.Dial(ctx, "unix://"+socket, "", 30*time.Second)
	if err != nil {
		return fmt.Errorf("dial the fake CRI to count its sandboxes: %w", err)
	}
	defer rt.Close()
	timeout := 2*time.Minute + time.Duration(res.Pods)*20*time.Millisecond
	c0, err := procstat.Read(a.pid(), false)
	if err != nil {
		return fmt.Errorf("agent CPU before the delete: %w", err)
	}
	start := time.Now()
	if err := w.removeAll(); err != nil {
		return fmt.Errorf("remove manifests: %w", err)
	}
	if err := waitNoSandboxes(ctx, rt, a, res.Pods, start.Add(timeout), label); err != nil {
		return err
	}
	wt := newWatcher(a, res.Pods)
	err = wt.until(ctx, label, timeout-time.Since(start), func(listed int) (bool, string) {
		return listed == 0, fmt.Sprintf("deleting: runtime empty, %d pods still listed", listed)
	})
	if err != nil {
		return err
	}
	res.DeleteSec = time.Since(start).Seconds()
	c1, err := procstat.Read(a.pid(), false)
	if err != nil {
		return fmt.Errorf("agent CPU after the delete: %w", err)
	}
	res.DeleteCPUSec = c1.CPUSeconds() - c0.CPUSeconds()
	res.DeleteSysCPUSec = float64(c1.SysTicks-c0.SysTicks) / procstat.ClockTicks
	res.DeletePolls = wt.polls
	progress("%s: all %d deleted in %.1fs, agent CPU %.2fs (%d polls)", label, res.Pods, res.DeleteSec, res.DeleteCPUSec, wt.polls)
	return nil
}

// runtimePollInterval is the gap between two sandbox listings with n pods:
// a listing of 10,000 sandboxes costs the fake and the suite a few ms of
// CPU each, on the cores the agent runs on.
func runtimePollInterval(n int) time.Duration {
	return max(50*time.Millisecond, time.Duration(n)*20*time.Microsecond)
}

// waitNoSandboxes lists the runtime's sandboxes until there are none,
// printing progress every 2 s.
func waitNoSandboxes(ctx context.Context, rt *cri.Client, a agent, pods int, deadline time.Time, label string) error {
	last := time.Now()
	for {
		sbs, err := rt.ListPodSandbox(ctx, nil)
		if err != nil {
			return fmt.Errorf("list the fake CRI's sandboxes: %w", err)
		}
		if len(sbs) == 0 {
			return nil
		}
		if a.exited() {
			return a.errExited()
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: %d sandboxes still in the runtime at the deadline", label, len(sbs))
		}
		if time.Since(last) >= 2*time.Second {
			progress("%s: deleting: %d sandboxes left in the runtime", label, len(sbs))
			last = time.Now()
		}
		if err := sleep(ctx, runtimePollInterval(pods)); err != nil {
			return err
		}
	}
}
