package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/podline/podline/bench/internal/procstat"
	"github.com/podline/podline/bench/internal/result"
	"github.com/podline/podline/cri"
)

// The real scenario: podline and the kubelet in turn on the real
// containerd + runc, with every figure a median of several runs. Pods are
// the suite's host-network busybox pods, written at once or arriving at a
// steady rate (clusterloader2's node-throughput shape), watched through
// /pods.
//
// containerd runs in two configurations. "default" leaves its
// stats_collect_period as shipped (each container's CPU sampled every
// second), which the kubelet needs since it reads CPU usage from CRI
// stats; "podline" is the harness's (sampled every 10 minutes), which
// podline recommends since it reads cgroupfs itself. The harness's
// containerd serves the second; the suite starts a containerd of its own
// for the first (scripts/runtime.sh with its own state, run and bridge)
// and stops it at the end.

// Containerd configurations of the real scenario.
const (
	cfgDefault = "default"
	cfgPodline = "podline"
)

// realShape is what the pods do: how many, and how fast they come.
type realShape struct {
	Pods int     `json:"pods"`
	Rate float64 `json:"rate"` // manifests written per second; 0: all at once
	Idle bool    `json:"-"`    // measure the idle agent and runtime afterwards
}

func (s realShape) String() string {
	if s.Rate == 0 {
		return fmt.Sprintf("%d pods at once", s.Pods)
	}
	return fmt.Sprintf("%d pods at %g/s", s.Pods, s.Rate)
}

// realCase is one run: an agent on a containerd configuration.
type realCase struct {
	Agent  string    `json:"agent"`
	Mode   string    `json:"mode"`
	Config string    `json:"containerd_config"`
	Shape  realShape `json:"shape"`
	Run    int       `json:"run"`
	Runs   int       `json:"-"`
}

func (c realCase) label() string {
	return fmt.Sprintf("%s on containerd/%s, %s, round %d/%d", label(key(c.Agent, c.Mode, real, 0)), c.Config, c.Shape, c.Run, c.Runs)
}

// realAgent is an agent in a mode on a containerd configuration.
type realAgent struct{ agent, mode, config string }

// id is how -real-agents names a: agent[:mode]@config.
func (a realAgent) id() string {
	if a.mode == dflt {
		return a.agent + "@" + a.config
	}
	return a.agent + ":" + a.mode + "@" + a.config
}

// realAgents are what every shape runs, in the order they run within one
// round: the kubelet, podline on the same containerd, podline on the one
// it recommends, and that without its start limit (an ablation).
var realAgents = []realAgent{
	{kubelet, dflt, cfgDefault},
	{podline, dflt, cfgDefault},
	{podline, dflt, cfgPodline},
	{podline, result.ModeStartsUnlimited, cfgPodline},
}

// realPlan interleaves the runs: for each shape, round 1 of every agent,
// then round 2, so that a slow spell of the machine falls on all of them.
// Without the kubelet only podline's cases run.
// pods, rate and agents, when set (rate ≥ 0), keep the shapes of that many
// pods and that arrival rate, and the agents named (agent[:mode]@config).
func realPlan(quick, withKubelet bool, runs, pods int, rate float64, agents string) []realCase {
	shapes := []realShape{{Pods: 30}, {Pods: 100, Idle: true}, {Pods: 100, Rate: 5}}
	if quick {
		shapes, runs = []realShape{{Pods: 5, Idle: true}}, 1
	}
	var out []realCase
	for _, sh := range shapes {
		if (pods > 0 && sh.Pods != pods) || (rate >= 0 && sh.Rate != rate) {
			continue
		}
		for r := 1; r <= runs; r++ {
			for _, a := range realAgents {
				if (a.agent == kubelet && !withKubelet) || (agents != "" && !slices.Contains(strings.Split(agents, ","), a.id())) {
					continue
				}
				out = append(out, realCase{Agent: a.agent, Mode: a.mode, Config: a.config, Shape: sh, Run: r, Runs: runs})
			}
		}
	}
	return out
}

// realRun is what one run measured.
type realRun struct {
	realCase

	// Manifests written → every pod Running in /pods; per pod, its
	// manifest written → Running.
	AllRunningSec float64          `json:"all_running_sec"`
	Startup       result.Quantiles `json:"startup_ms"`
	StartupMs     []float64        `json:"startup_samples_ms"`
	// CPU seconds over the same span: the agent; containerd itself (and
	// the shim start-up commands it waits for); the shims, with the runc
	// commands they wait for; and every CPU of the machine (busy time from
	// /proc/stat, kernel threads included).
	AgentCPUSec      float64 `json:"agent_cpu_sec"`
	ContainerdCPUSec float64 `json:"containerd_cpu_sec"`
	ShimCPUSec       float64 `json:"shim_cpu_sec"`
	MachineCPUSec    float64 `json:"machine_cpu_sec"`
	AgentPeakRSSMiB  float64 `json:"agent_peak_rss_mib"`
	// RuntimeCalls is the agent's CRI calls over the same span, per pod,
	// by method (lower case, no underscores: both agents' names meet),
	// from its own /metrics: podline's podline_cri_request_duration_seconds
	// counts, the kubelet's kubelet_runtime_operations_total.
	RuntimeCalls map[string]float64 `json:"runtime_calls_per_pod,omitempty"`

	// Idle once every pod runs and nothing changes, nobody polling, in %
	// of one core (only for shapes that measure it).
	IdleWindowSec         float64 `json:"idle_window_sec,omitempty"`
	IdleAgentPercent      float64 `json:"idle_agent_percent,omitempty"`
	IdleContainerdPercent float64 `json:"idle_containerd_percent,omitempty"`
	IdleShimPercent       float64 `json:"idle_shim_percent,omitempty"`

	// Every manifest removed → /pods lists none and no sandbox of the
	// run is ready in the runtime.
	DeleteSec float64 `json:"delete_sec"`
}

// realScenario runs the plan and writes real.json and real.md into out.
func (s *suite) realScenario(ctx context.Context, out string) error {
	rts := newRealRuntimes(s)
	defer rts.stop()
	cases := realPlan(s.cfg.quick, s.kubelet != "", s.cfg.realRuns, s.cfg.realPods, s.cfg.realRate, s.cfg.realAgents)
	var last string
	err := runCases(ctx, "real", out, cases,
		func(realCase) int { return 1 },
		func(c realCase) string { return c.label() },
		func(c realCase, _ int, label string) (realRun, error) { return s.realCase(ctx, rts, c, label) },
		func(runs []realRun, failed []string) error {
			md := realMarkdown(s.run, runs, failed)
			last = md
			return writeCases(out, "real", s.run, runs, failed, md)
		})
	fmt.Println(last)
	return err
}

func (s *suite) realCase(ctx context.Context, rts *realRuntimes, c realCase, label string) (realRun, error) {
	res := realRun{realCase: c}
	rt, err := rts.get(ctx, c.Config)
	if err != nil {
		return res, err
	}
	dir, err := os.MkdirTemp(s.tmp, "real-")
	if err != nil {
		return res, err
	}
	defer os.RemoveAll(dir)
	progress("%s: starting", label)
	// Runs last: what the agent left in the runtime goes.
	defer func() {
		ctx := context.WithoutCancel(ctx)
		if _, left, err := benchSandboxes(ctx, rt.cri); err != nil || len(left) > 0 {
			if err == nil {
				err = removeSandboxes(ctx, rt.cri, left)
			}
			if err != nil {
				progress("%s: removing the sandboxes left: %v", label, err)
			}
		}
	}()
	a, err := s.startAgent(ctx, key(c.Agent, c.Mode, real, c.Shape.Pods), dir, "unix://"+rt.socket)
	if err != nil {
		return res, err
	}
	defer release(a, label)
	if err := sleep(ctx, s.settle()); err != nil {
		return res, err
	}
	w := newPodWriter(a.manifests())
	err = realStart(ctx, a, rt, w, &res, label)
	if err == nil && c.Shape.Idle {
		err = s.realIdle(ctx, a, rt, &res, label)
	}
	// Whatever happened, the runtime is left without the run's pods.
	if derr := realDelete(ctx, a, rt, w, &res, label); derr != nil {
		return res, fmt.Errorf("delete: %w (after: %v)", derr, err)
	}
	if err != nil {
		return res, err
	}
	if a.exited() {
		return res, a.errExited()
	}
	return res, nil
}

// realDelete removes every manifest and waits until /pods lists no pod
// and the runtime holds no ready sandbox of the run: the kubelet drops a
// pod from /pods before its containers are stopped, podline once its
// sandbox is gone, so only both together compare.
func realDelete(ctx context.Context, a agent, rt *realRuntime, w *podWriter, res *realRun, label string) error {
	if err := w.removeAll(); err != nil {
		return err
	}
	ctx = context.WithoutCancel(ctx)
	wt := newWatcher(a, 0)
	start := time.Now()
	err := wt.until(ctx, label, 2*time.Minute+time.Duration(res.Shape.Pods)*100*time.Millisecond, func(listed int) (bool, string) {
		ready, _, err := benchSandboxes(ctx, rt.cri)
		if err != nil {
			return false, err.Error()
		}
		return listed == 0 && ready == 0, fmt.Sprintf("deleting: %d pods listed, %d sandboxes ready", listed, ready)
	})
	if err != nil {
		return err
	}
	res.DeleteSec = time.Since(start).Seconds()
	progress("%s: deleted in %.1fs", label, res.DeleteSec)
	return nil
}

// cpuMeters samples everything a real start spends CPU on.
type cpuMeters struct {
	agent, containerd procstat.Cost
	shims             *procstat.GroupCPU
	machine           float64
}

func readMeters(agentPID int, rt *realRuntime) (cpuMeters, error) {
	var m cpuMeters
	var err error
	if m.agent, err = procstat.Read(agentPID, false); err != nil {
		return m, fmt.Errorf("agent: %w", err)
	}
	if m.containerd, err = procstat.Read(rt.pid, false); err != nil {
		return m, fmt.Errorf("containerd: %w", err)
	}
	m.shims = procstat.NewGroupCPU(rt.shims)
	m.machine, err = procstat.MachineBusySeconds()
	return m, err
}

// realStart writes the manifests, at once or at the shape's rate, and
// waits until every pod is Running.
func realStart(ctx context.Context, a agent, rt *realRuntime, w *podWriter, res *realRun, label string) error {
	calls0 := runtimeCalls(ctx, a)
	m0, err := readMeters(a.pid(), rt)
	if err != nil {
		return err
	}
	n := res.Shape.Pods
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("bench-%05d", i) + "-" + nodeName
	}
	wt := newWatcher(a, n)
	start := time.Now()
	written := 0
	// At a rate, the manifests are written between polls, each at its
	// time; the watcher's gap is short enough (50 ms) for 5 pods/s.
	write := func() error {
		for written < n {
			if res.Shape.Rate > 0 && time.Since(start) < time.Duration(float64(written)/res.Shape.Rate*float64(time.Second)) {
				return nil
			}
			if _, err := w.add(fmt.Sprintf("bench-%05d", written)); err != nil {
				return err
			}
			written++
		}
		return nil
	}
	timeout := 2*time.Minute + time.Duration(n)*time.Second
	err = wt.until(ctx, label, timeout, func(int) (bool, string) {
		if werr := write(); werr != nil {
			err = werr
			return true, ""
		}
		up := 0
		for _, name := range names {
			if _, ok := wt.running[name]; ok {
				up++
			}
		}
		return up == n && written == n, fmt.Sprintf("%d/%d written, %d Running", written, n, up)
	})
	if err != nil {
		return err
	}
	m1, err := readMeters(a.pid(), rt)
	if err != nil {
		return err
	}
	res.AgentCPUSec = m1.agent.CPUSeconds() - m0.agent.CPUSeconds()
	res.ContainerdCPUSec = m1.containerd.CPUSeconds() - m0.containerd.CPUSeconds()
	res.ShimCPUSec = m0.shims.Sample()
	res.MachineCPUSec = m1.machine - m0.machine
	res.AgentPeakRSSMiB = mib(float64(m1.agent.HWM))
	if calls1 := runtimeCalls(ctx, a); calls0 != nil && calls1 != nil {
		res.RuntimeCalls = map[string]float64{}
		for m, n := range calls1 {
			if d := n - calls0[m]; d > 0 {
				res.RuntimeCalls[m] = d / float64(res.Shape.Pods)
			}
		}
	}
	var last time.Time
	for _, name := range names {
		at := wt.running[name]
		last = maxTime(last, at)
		res.StartupMs = append(res.StartupMs, roundMs(at.Sub(w.written[name])))
	}
	slices.Sort(res.StartupMs)
	res.Startup = quantiles(res.StartupMs)
	res.AllRunningSec = last.Sub(start).Seconds()
	progress("%s: all %d Running in %.1fs, startup p50 %.0f ms p99 %.0f ms; CPU s: agent %.2f, containerd %.2f, shims+runc %.2f, machine %.2f",
		label, n, res.AllRunningSec, res.Startup.P50, res.Startup.P99, res.AgentCPUSec, res.ContainerdCPUSec, res.ShimCPUSec, res.MachineCPUSec)
	return nil
}

// realIdle lets the agent and runtime settle, then measures both with
// nobody polling.
func (s *suite) realIdle(ctx context.Context, a agent, rt *realRuntime, res *realRun, label string) error {
	if err := sleep(ctx, s.settle()); err != nil {
		return err
	}
	m0, err := readMeters(a.pid(), rt)
	if err != nil {
		return err
	}
	t0 := time.Now()
	if err := sleep(ctx, s.cfg.idleWindow); err != nil {
		return err
	}
	m1, err := readMeters(a.pid(), rt)
	if err != nil {
		return err
	}
	secs := time.Since(t0).Seconds()
	res.IdleWindowSec = secs
	res.IdleAgentPercent = 100 * (m1.agent.CPUSeconds() - m0.agent.CPUSeconds()) / secs
	res.IdleContainerdPercent = 100 * (m1.containerd.CPUSeconds() - m0.containerd.CPUSeconds()) / secs
	res.IdleShimPercent = 100 * m0.shims.Sample() / secs
	progress("%s: idle over %.0fs: agent %.2f%%, containerd %.2f%%, shims %.2f%% of a core",
		label, secs, res.IdleAgentPercent, res.IdleContainerdPercent, res.IdleShimPercent)
	return nil
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// roundMs is d in ms, rounded to 10 µs: finer is noise.
func roundMs(d time.Duration) float64 {
	return float64(d.Round(10*time.Microsecond)) / float64(time.Millisecond)
}

// realRuntime is one containerd the real scenario talks to.
type realRuntime struct {
	socket string
	pid    int
	// cri asks it about the run's sandboxes: one connection for the
	// scenario, so that the polls of a delete cost no dial.
	cri *cri.Client
	// env starts and stops it through scripts/runtime.sh; nil for the
	// harness's, which the suite neither starts nor stops.
	env []string
}

// shims are the pids of this containerd's shims: those whose command
// line names its socket.
func (r *realRuntime) shims() []int {
	return procstat.ByNameArg(r.socket, "containerd-shim", "containerd-shim-runc-v2")
}

// realRuntimes starts the suite's own containerd on first use.
type realRuntimes struct {
	s   *suite
	own map[string]*realRuntime
}

func newRealRuntimes(s *suite) *realRuntimes {
	return &realRuntimes{s: s, own: map[string]*realRuntime{}}
}

// ownEnv is the environment of the suite's containerd: its own state, run
// directory, bridge and network, so that its `down` touches nothing of the
// harness's.
func ownEnv(config string) []string {
	return []string{
		"PODLINE_STATE=/var/lib/podline-bench-" + config,
		"PODLINE_RUN=/run/podline-bench-" + config,
		"CNI_BRIDGE=podline-b" + config[:1],
		"CNI_NETWORK=podline-bench-" + config,
		"CNI_SUBNET=10.89.0.0/16",
		"CONTAINERD_STATS_COLLECT_PERIOD=default",
	}
}

func (r *realRuntimes) get(ctx context.Context, config string) (*realRuntime, error) {
	if rt, ok := r.own[config]; ok && rt.cri != nil {
		return rt, nil
	}
	switch config {
	case cfgPodline:
		pid, err := readPID(r.s.cfg.containerdP)
		if err != nil {
			return nil, fmt.Errorf("the real scenario needs the harness containerd (scripts/runtime.sh up): %w", err)
		}
		return r.add(ctx, config, &realRuntime{socket: r.s.cfg.endpoint, pid: pid})
	case cfgDefault:
		env := ownEnv(config)
		progress("starting a containerd with its default stats_collect_period (%s)", env[0])
		if err := r.s.runtimeScript(ctx, env, "up"); err != nil {
			return nil, err
		}
		run := filepath.Join("/run", "podline-bench-"+config)
		pid, err := readPID(filepath.Join(run, "containerd.pid"))
		if err != nil {
			return nil, err
		}
		return r.add(ctx, config, &realRuntime{socket: filepath.Join(run, "containerd.sock"), pid: pid, env: env})
	}
	return nil, fmt.Errorf("unknown containerd configuration %q", config)
}

// add keeps rt as config's, so that stop stops it whatever follows, and
// connects to it.
func (r *realRuntimes) add(ctx context.Context, config string, rt *realRuntime) (*realRuntime, error) {
	r.own[config] = rt
	c, err := cri.Dial(ctx, "unix://"+rt.socket, "", 30*time.Second)
	if err != nil {
		return nil, err
	}
	rt.cri = c
	return rt, nil
}

// stop closes the connections, and stops the containerds the suite
// started.
func (r *realRuntimes) stop() {
	for _, rt := range r.own {
		if rt.cri != nil {
			rt.cri.Close()
		}
		if rt.env == nil {
			continue
		}
		if err := r.s.runtimeScript(context.WithoutCancel(context.Background()), rt.env, "down"); err != nil {
			progress("stopping the suite's containerd: %v", err)
		}
	}
}

// runtimeCalls is the agent's CRI calls so far by method, from its
// /metrics; nil when it has none to give.
func runtimeCalls(ctx context.Context, a agent) map[string]float64 {
	m, err := readMetrics(ctx, a)
	if err != nil {
		return nil
	}
	out := map[string]float64{}
	for series, v := range m.samples {
		var method string
		switch {
		case strings.HasPrefix(series, `podline_cri_request_duration_seconds_count{op="`):
			method = strings.TrimPrefix(series, `podline_cri_request_duration_seconds_count{op="`)
		case strings.HasPrefix(series, `kubelet_runtime_operations_total{operation_type="`):
			method = strings.TrimPrefix(series, `kubelet_runtime_operations_total{operation_type="`)
		default:
			continue
		}
		method, _, _ = strings.Cut(method, `"`)
		out[strings.ToLower(strings.ReplaceAll(method, "_", ""))] += v
	}
	if len(out) == 0 {
		return nil
	}
	return out
}
