package main

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/podline/podline/bench/internal/result"
)

// relMarkdown renders the reliability report: one summary row per case,
// then every run with its figures and, for a failed run, its evidence.
func relMarkdown(run *result.Run, cfg *config, runs []relRun, errs []string) string {
	var b strings.Builder
	b.WriteString("# reliability: podline under faults (issue 15 §1)\n\n")
	fmt.Fprintf(&b, "- machine: %s, %d CPUs, kernel %s\n- podline: %s\n", run.Machine.Hostname, run.Machine.CPUs, run.Machine.Kernel, run.Podline)
	if cfg.quick {
		b.WriteString("- **quick run**: small N, a smoke run, not a measurement\n")
	}
	fmt.Fprintf(&b, "- runtime fake-containerd: cmd/fakecri with containerd-like latencies (RunPodSandbox 77 ms, Create/StartContainer 35 ms each, StopPodSandbox 100 ms, others 1 ms); a fresh fake CRI and fresh podline directories (own cgroup root) for every run; default podline flags unless a case says otherwise; host-network pods running `sleep`, written at once as static manifests. Runtime containerd: the harness's containerd 2 + runc (scripts/runtime.sh), podline on it with default flags\n")
	fmt.Fprintf(&b, "- kill -9 cases: podline gets SIGKILL at the case's moment (read from the runtime's lists every 10 ms) and is restarted at once on the same directories. Convergence = restart → first look at which every invariant holds (runtime lists then GET /pods, every 100 ms, so to ~0.1 s plus one look's time); the invariants must still hold %s later. Target ≤ %s. Calls after restart: the fake CRI's state-changing calls from the kill to the end of the run\n", relStability, relConverge)
	fmt.Fprintf(&b, "- runs per case: %d of each kill -9 case, %d of the others\n\n", cfg.relRuns, cfg.relOther)

	keys, by := groupBy(runs, func(r relRun) string { return r.Case })
	b.WriteString("## Summary: medians (min–max) over runs\n\n")
	b.WriteString("| case | runtime | pods | runs | PASS | at the kill: running / ready sandboxes | convergence s | calls after restart | dead leftovers (sandboxes / containers) | other figures |\n")
	b.WriteString("| --- | --- | ---: | ---: | ---: | --- | ---: | --- | --- | --- |\n")
	for _, k := range keys {
		rs := by[k]
		pass := 0
		for _, r := range rs {
			if r.Pass {
				pass++
			}
		}
		killed, conv, calls, left := "–", "–", "–", "–"
		if rs[0].KilledRunning+rs[0].KilledReady > 0 {
			killed = medOrDash(of(rs, func(r relRun) float64 { return float64(r.KilledRunning) }), 0) + " / " +
				medOrDash(of(rs, func(r relRun) float64 { return float64(r.KilledReady) }), 0)
		}
		if rs[0].ConvergeSec != 0 {
			conv = medOrDash(slices.DeleteFunc(of(rs, func(r relRun) float64 { return r.ConvergeSec }), func(x float64) bool { return x < 0 }), 2)
			if never := countIf(rs, func(r relRun) bool { return r.ConvergeSec < 0 }); never > 0 {
				conv += fmt.Sprintf(", %d never", never)
			}
			if rs[0].Runtime == relRuntime {
				calls = callsCell(rs)
			}
			left = medOrDash(of(rs, func(r relRun) float64 { return float64(r.Left.DeadSandboxes) }), 0) + " / " +
				medOrDash(of(rs, func(r relRun) float64 { return float64(r.Left.ExitedContains) }), 0)
		}
		fmt.Fprintf(&b, "| %s | %s | %d | %d | %d/%d | %s | %s | %s | %s | %s |\n", k, rs[0].Runtime, rs[0].Pods, len(rs), pass, len(rs), killed, conv, calls, left, figuresCell(rs))
	}

	b.WriteString("\n## Cases\n")
	for _, k := range keys {
		rs := by[k]
		fmt.Fprintf(&b, "\n### %s (%d pods)\n\nInvariant: %s.\n\n", k, rs[0].Pods, rs[0].Invariant)
		for _, r := range rs {
			fmt.Fprintf(&b, "- run %d: **%s**: %s\n", r.Run, verdict(r.Pass), r.Verdict)
			if len(r.CallsAfterKill) > 0 {
				fmt.Fprintf(&b, "  - calls after restart: %s\n", mapCell(r.CallsAfterKill))
			}
			for _, v := range r.ViolationSamples {
				fmt.Fprintf(&b, "  - violation: `%s`\n", v)
			}
			for _, name := range slices.Sorted(maps.Keys(r.Observed)) {
				if v := r.Observed[name]; v != "" {
					fmt.Fprintf(&b, "  - %s:\n\n    ```\n    %s\n    ```\n", name, strings.ReplaceAll(v, "\n", "\n    "))
				}
			}
		}
		if t := breakdownMarkdown(rs); t != "" {
			b.WriteString("\n" + t)
		}
	}
	if len(errs) > 0 {
		b.WriteString("\n## Runs that could not be completed\n\n")
		for _, e := range errs {
			fmt.Fprintf(&b, "- %s\n", e)
		}
	}
	return b.String()
}

// callsCell is the median of each state-changing call after the restart.
func callsCell(rs []relRun) string {
	methods := map[string]bool{}
	for _, r := range rs {
		for m := range r.CallsAfterKill {
			methods[m] = true
		}
	}
	if len(methods) == 0 {
		return "none"
	}
	var parts []string
	for _, m := range slices.Sorted(maps.Keys(methods)) {
		parts = append(parts, m+" "+medOrDash(of(rs, func(r relRun) float64 { return float64(r.CallsAfterKill[m]) }), 0))
	}
	return strings.Join(parts, ", ")
}

// figuresCell is the median of each of the hang and slow cases' figures.
func figuresCell(rs []relRun) string {
	names := map[string]bool{}
	for _, r := range rs {
		for n := range r.Figures {
			names[n] = true
		}
	}
	var parts []string
	for _, n := range slices.Sorted(maps.Keys(names)) {
		parts = append(parts, n+" "+medOrDash(of(rs, func(r relRun) float64 { return r.Figures[n] }), 1))
	}
	if len(parts) == 0 {
		return "–"
	}
	return strings.Join(parts, ", ")
}

func mapCell(m map[string]int64) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}

func countIf[V any](xs []V, f func(V) bool) int {
	n := 0
	for _, x := range xs {
		if f(x) {
			n++
		}
	}
	return n
}
