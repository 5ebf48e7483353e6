package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

// results is everything one run measured; it is written as JSON.
type results struct {
	Started    time.Time     `json:"started"`
	DurationS  float64       `json:"duration_s"`
	Command    string        `json:"command"`
	Host       string        `json:"host"`
	Kernel     string        `json:"kernel"`
	Cores      int           `json:"cores"`
	Podline    string        `json:"podline"`
	Containerd string        `json:"containerd"`
	Config     configSummary `json:"config"`
	Modes      []*modeResult `json:"modes"`
	Error      string        `json:"error,omitempty"`
}

type configSummary struct {
	ExitPods    int     `json:"exit_pods"`
	IdlePods    []int   `json:"idle_pods"`
	IdleWindowS float64 `json:"idle_window_s"`
	SettleS     float64 `json:"settle_s"`
	KillGapMS   float64 `json:"kill_gap_ms"`
	KillJitterS float64 `json:"kill_jitter_s"`
	PollSleepMS float64 `json:"poll_sleep_ms"`
	Endpoint    string  `json:"endpoint"`
	CgroupRoot  string  `json:"cgroup_root"`
}

type modeResult struct {
	Mode string        `json:"mode"`
	Exit *exitResult   `json:"exit_latency,omitempty"`
	Idle []*idleResult `json:"idle,omitempty"`
}

func run(ctx context.Context, c *config) (err error) {
	started := time.Now()
	b, err := newBench(ctx, c)
	if err != nil {
		return err
	}
	defer func() { b.close(err != nil) }()
	if leftover, _ := b.ourSandboxes(ctx); len(leftover) > 0 {
		return fmt.Errorf("the runtime already holds %d sandboxes of this bench (another run?); remove them first", len(leftover))
	}
	res := newResults(ctx, b, started)
	defer func() {
		res.DurationS = time.Since(started).Seconds()
		out := c.out
		if err != nil {
			// What a failed run measured is kept, but never in place of
			// a good run's files.
			res.Error = err.Error()
			out = strings.TrimSuffix(out, filepath.Ext(out)) + "-failed" + filepath.Ext(out)
		}
		if werr := writeResults(out, res); werr != nil && err == nil {
			err = werr
		}
	}()
	byMode := map[string]*modeResult{}
	for _, m := range c.modes {
		byMode[m] = &modeResult{Mode: m}
		res.Modes = append(res.Modes, byMode[m])
	}
	// Modes alternate within each scenario, so drift in the machine's
	// load falls on both alike.
	if c.exitPods > 0 {
		for _, m := range c.modes {
			progress("== exit latency, --pleg=%s, %d pods", m, c.exitPods)
			r, err := b.exitLatency(ctx, m)
			byMode[m].Exit = r
			if err != nil {
				return err
			}
			progress("exit/%s: p50 %s  p90 %s  p99 %s  max %s", m, fmtMS(r.P50MS), fmtMS(r.P90MS), fmtMS(r.P99MS), fmtMS(r.MaxMS))
		}
	}
	for _, n := range c.idlePods {
		for _, m := range c.modes {
			progress("== idle cost, --pleg=%s, %d pods", m, n)
			r, err := b.idle(ctx, m, n)
			if r != nil {
				byMode[m].Idle = append(byMode[m].Idle, r)
			}
			if err != nil {
				return err
			}
		}
	}
	progress("done in %.0fs", time.Since(started).Seconds())
	return nil
}

func newResults(ctx context.Context, b *bench, started time.Time) *results {
	c := b.cfg
	host, _ := os.Hostname()
	kernel, _ := os.ReadFile("/proc/sys/kernel/osrelease")
	r := &results{
		Started: started,
		Command: commandLine(),
		Host:    host,
		Kernel:  strings.TrimSpace(string(kernel)),
		Cores:   runtime.NumCPU(),
		Podline: b.bin,
		Config: configSummary{
			ExitPods:    c.exitPods,
			IdlePods:    c.idlePods,
			IdleWindowS: c.idleWindow.Seconds(),
			SettleS:     c.settle.Seconds(),
			KillGapMS:   ms(c.killGap),
			KillJitterS: c.killJitter.Seconds(),
			PollSleepMS: ms(c.pollSleep),
			Endpoint:    c.endpoint,
			CgroupRoot:  c.cgroupRoot,
		},
	}
	if b.rev != "" {
		r.Podline = "built from " + b.rev
	}
	if v, err := b.rt.Version(ctx); err == nil {
		r.Containerd = v.RuntimeName + " " + v.RuntimeVersion
	}
	return r
}

// commandLine is how the bench was started; `go run` shows as itself
// rather than as its binary in the build cache.
func commandLine() string {
	name := os.Args[0]
	if strings.Contains(name, "go-build") {
		name = "go run ./eventplane"
	}
	return strings.Join(append([]string{name}, os.Args[1:]...), " ")
}
