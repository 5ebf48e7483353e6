package main

import (
	"context"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/podline/podline/bench/internal/result"
)

// runtimeScript runs scripts/runtime.sh verb with env added to the
// suite's environment.
func (s *suite) runtimeScript(ctx context.Context, env []string, verb string) error {
	cmd := exec.CommandContext(ctx, filepath.Join(s.cfg.repo, "scripts", "runtime.sh"), verb)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s scripts/runtime.sh %s: %w", strings.Join(env, " "), verb, err)
	}
	return nil
}

// realTargets are issue 14's targets at 100 real pods, as podline /
// kubelet ratios of medians.
var realTargets = []struct {
	metric string
	max    float64
	get    func(realRun) float64
}{
	{"per-pod p50", 0.5, func(r realRun) float64 { return r.Startup.P50 }},
	{"all Running", 0.8, func(r realRun) float64 { return r.AllRunningSec }},
	{"agent CPU", 0.25, func(r realRun) float64 { return r.AgentCPUSec }},
}

// rateP99Target is the steady-arrival target: p99 startup at most 5 s,
// and no more than the kubelet's.
const rateP99Target = 5000.0

// realMarkdown renders real.md: one table per shape with every agent and
// configuration, the idle figures, and podline's ratios to the kubelet
// against the targets.
func realMarkdown(run *result.Run, runs []realRun, failed []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Real runtime: podline and the kubelet on containerd + runc\n\n")
	fmt.Fprintf(&b, "podline %s; kubelet %s; machine %s, %d CPUs, %s, cgroup %s.\n\n",
		run.Podline, orDash(run.Kubelet), run.Machine.Hostname, run.Machine.CPUs, run.Machine.Kernel, run.Machine.CgroupMode)
	b.WriteString("Host-network busybox pods through the static pod directory, watched through /pods. " +
		"containerd/default keeps containerd's stats_collect_period as shipped (what the kubelet needs); " +
		"containerd/podline samples every 10 minutes (what podline recommends). " +
		"Each cell is the median of the runs with (min–max); runs were interleaved agent by agent. " +
		"CPU in seconds over manifests written → all Running: shims include the runc commands they wait for; " +
		"machine is every CPU's busy time, kernel threads included.\n\n")
	for _, shape := range realShapes(runs) {
		fmt.Fprintf(&b, "## %s\n\n", shape)
		b.WriteString("| agent | containerd | runs | all Running s | p50 ms | p90 ms | p99 ms | agent CPU s | containerd CPU s | shims+runc CPU s | machine CPU s | agent peak RSS MiB | delete s |\n")
		b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
		idle := false
		for _, g := range realGroups(runs, shape) {
			rs := g.runs
			fmt.Fprintf(&b, "| %s | %s | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n",
				g.name(), g.config, len(rs),
				realCell(rs, func(r realRun) float64 { return r.AllRunningSec }, 1),
				realCell(rs, func(r realRun) float64 { return r.Startup.P50 }, 0),
				realCell(rs, func(r realRun) float64 { return r.Startup.P90 }, 0),
				realCell(rs, func(r realRun) float64 { return r.Startup.P99 }, 0),
				realCell(rs, func(r realRun) float64 { return r.AgentCPUSec }, 2),
				realCell(rs, func(r realRun) float64 { return r.ContainerdCPUSec }, 1),
				realCell(rs, func(r realRun) float64 { return r.ShimCPUSec }, 1),
				realCell(rs, func(r realRun) float64 { return r.MachineCPUSec }, 1),
				realCell(rs, func(r realRun) float64 { return r.AgentPeakRSSMiB }, 0),
				realCell(rs, func(r realRun) float64 { return r.DeleteSec }, 1))
			idle = idle || rs[0].IdleWindowSec > 0
		}
		if idle {
			b.WriteString("\nIdle, every pod running and nobody polling (% of one core):\n\n")
			b.WriteString("| agent | containerd | agent | containerd | shims |\n|---|---|---|---|---|\n")
			for _, g := range realGroups(runs, shape) {
				fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", g.name(), g.config,
					realCell(g.runs, func(r realRun) float64 { return r.IdleAgentPercent }, 2),
					realCell(g.runs, func(r realRun) float64 { return r.IdleContainerdPercent }, 2),
					realCell(g.runs, func(r realRun) float64 { return r.IdleShimPercent }, 2))
			}
		}
		b.WriteString(realCalls(realGroups(runs, shape)))
		b.WriteString(realRatios(runs, shape))
		b.WriteString("\n")
	}
	if len(failed) > 0 {
		b.WriteString("## Failed runs\n\n")
		for _, f := range failed {
			fmt.Fprintf(&b, "- %s\n", strings.ReplaceAll(f, "\n", " "))
		}
	}
	return b.String()
}

// realRatios is podline's medians over the kubelet's in one shape, with
// the targets where the shape has them.
func realRatios(runs []realRun, shape realShape) string {
	var kube []realRun
	for _, g := range realGroups(runs, shape) {
		if g.agent == kubelet && g.mode == dflt {
			kube = g.runs
		}
	}
	var b strings.Builder
	for _, g := range realGroups(runs, shape) {
		if g.agent != podline {
			continue
		}
		if shape.Rate > 0 {
			p99, _, _ := median(realValues(g.runs, func(r realRun) float64 { return r.Startup.P99 }))
			verdict := fmt.Sprintf("p99 %.0f ms: %s the %.0f ms target", p99, metOrNot(p99 <= rateP99Target), rateP99Target)
			if len(kube) > 0 {
				k, _, _ := median(realValues(kube, func(r realRun) float64 { return r.Startup.P99 }))
				verdict += fmt.Sprintf("; ×%.2f the kubelet's (%s)", p99/k, metOrNot(p99 <= k))
			}
			fmt.Fprintf(&b, "\n- %s on containerd/%s: %s.\n", g.name(), g.config, verdict)
			continue
		}
		if len(kube) == 0 {
			continue
		}
		var parts []string
		for _, t := range realTargets {
			a, _, _ := median(realValues(g.runs, t.get))
			k, _, _ := median(realValues(kube, t.get))
			if k <= 0 {
				continue
			}
			part := fmt.Sprintf("%s ×%.2f", t.metric, a/k)
			if shape.Pods == 100 {
				part += fmt.Sprintf(" (target ≤ %.2f: %s)", t.max, metOrNot(a/k <= t.max))
			}
			parts = append(parts, part)
		}
		fmt.Fprintf(&b, "\n- %s on containerd/%s ÷ the kubelet on containerd/default: %s.\n", g.name(), g.config, strings.Join(parts, ", "))
	}
	return b.String()
}

func metOrNot(ok bool) string {
	if ok {
		return "met"
	}
	return "not met"
}

// realShapes lists the shapes that ran, in the plan's order.
func realShapes(runs []realRun) []realShape {
	var out []realShape
	for _, r := range runs {
		sh := realShape{Pods: r.Shape.Pods, Rate: r.Shape.Rate}
		if !slices.Contains(out, sh) {
			out = append(out, sh)
		}
	}
	return out
}

type realGroup struct {
	realAgent
	runs []realRun
}

// realGroups splits a shape's runs by agent and configuration, in
// realAgents' order.
func realGroups(runs []realRun, shape realShape) []realGroup {
	var out []realGroup
	for _, a := range realAgents {
		g := realGroup{realAgent: a}
		for _, r := range runs {
			if r.Agent == a.agent && r.Mode == a.mode && r.Config == a.config && r.Shape.Pods == shape.Pods && r.Shape.Rate == shape.Rate {
				g.runs = append(g.runs, r)
			}
		}
		if len(g.runs) > 0 {
			out = append(out, g)
		}
	}
	return out
}

func (a realAgent) name() string { return label(key(a.agent, a.mode, real, 0)) }

func realValues(rs []realRun, get func(realRun) float64) []float64 {
	xs := make([]float64, len(rs))
	for i, r := range rs {
		xs[i] = get(r)
	}
	return xs
}

func realCell(rs []realRun, get func(realRun) float64, prec int) string {
	return medCell(realValues(rs, get), prec)
}

// realCalls lists each agent's CRI calls per pod over the start, by
// method (medians of the runs); methods under 0.05 per pod are left out.
func realCalls(groups []realGroup) string {
	var b strings.Builder
	for _, g := range groups {
		methods := map[string]bool{}
		for _, r := range g.runs {
			for m := range r.RuntimeCalls {
				methods[m] = true
			}
		}
		if len(methods) == 0 {
			continue
		}
		total := realValues(g.runs, func(r realRun) float64 {
			t := 0.0
			for _, n := range r.RuntimeCalls {
				t += n
			}
			return t
		})
		var parts []string
		for _, m := range slices.Sorted(maps.Keys(methods)) {
			med, _, _ := median(realValues(g.runs, func(r realRun) float64 { return r.RuntimeCalls[m] }))
			if med >= 0.05 {
				parts = append(parts, fmt.Sprintf("%s %.2f", m, med))
			}
		}
		if b.Len() == 0 {
			b.WriteString("\nCRI calls per pod from manifests written to all Running, from each agent's /metrics (median of the runs):\n\n")
		}
		fmt.Fprintf(&b, "- %s on containerd/%s: %s (%s).\n", g.name(), g.config, medCell(total, 1), strings.Join(parts, ", "))
	}
	return b.String()
}
