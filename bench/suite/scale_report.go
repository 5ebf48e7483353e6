package main

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/podline/podline/bench/internal/result"
)

// What the per-pod figures of a run are relative to.
const (
	baseSet    = "set"      // the N=0 run of the same set
	baseMedian = "median"   // the median of the N=0 runs: the set's failed or did not run
	baseNone   = "absolute" // no N=0 run at all: the whole figure over N, an upper bound
)

// perPod returns runs with RSS and heap (in use) per pod filled in: the
// run's figure less the empty agent's, over N. The empty agent is the N=0
// run of the same set, or else the median of the N=0 runs; without any,
// the whole figure is divided. runs is not changed.
func perPod(runs []scaleRun) []scaleRun {
	zero := map[int]scaleRun{}
	var rss, heap []float64
	for _, r := range runs {
		if r.Pods == 0 {
			zero[r.Set] = r
			rss, heap = append(rss, r.RSSMiB), append(heap, r.HeapInuseMiB)
		}
	}
	medRSS, _, _ := median(rss)
	medHeap, _, _ := median(heap)
	out := slices.Clone(runs)
	for i := range out {
		r := &out[i]
		if r.Pods == 0 {
			r.RSSPerPodKiB, r.HeapPerPodKiB, r.PerPodBase = 0, 0, ""
			continue
		}
		baseRSS, baseHeap := 0.0, 0.0
		switch z, ok := zero[r.Set]; {
		case ok:
			baseRSS, baseHeap, r.PerPodBase = z.RSSMiB, z.HeapInuseMiB, baseSet
		case len(rss) > 0:
			baseRSS, baseHeap, r.PerPodBase = medRSS, medHeap, baseMedian
		default:
			r.PerPodBase = baseNone
		}
		r.RSSPerPodKiB = (r.RSSMiB - baseRSS) * 1024 / float64(r.Pods)
		r.HeapPerPodKiB = (r.HeapInuseMiB - baseHeap) * 1024 / float64(r.Pods)
	}
	return out
}

// ratioOf is a/b, NaN when b is zero: the N=0 runs start and delete
// nothing.
func ratioOf(a, b float64) float64 {
	if b == 0 {
		return math.NaN()
	}
	return a / b
}

// finiteOf keeps the finite values of xs.
func finiteOf(xs []float64) []float64 {
	return slices.DeleteFunc(slices.Clone(xs), func(v float64) bool { return math.IsNaN(v) || math.IsInf(v, 0) })
}

// medOrDash is medCell over the finite values, "–" when there are none.
func medOrDash(xs []float64, prec int) string {
	xs = finiteOf(xs)
	if len(xs) == 0 {
		return "–"
	}
	return medCell(xs, prec)
}

// scaleByPods groups runs by N, in ascending N.
func scaleByPods(runs []scaleRun) ([]int, map[int][]scaleRun) {
	keys, by := groupBy(runs, func(r scaleRun) int { return r.Pods })
	slices.Sort(keys)
	return keys, by
}

func pullCalls(r scaleRun) float64 { return float64(r.PullImage[image]) }

func scaleMarkdown(run *result.Run, quick bool, settle, window time.Duration, runs []scaleRun, failed []string, plots []string) string {
	runs = perPod(runs)
	var b strings.Builder
	fmt.Fprintf(&b, "# scale: podline's cost against the pods it holds\n\n")
	fmt.Fprintf(&b, "- machine: %s, %d CPUs, kernel %s\n- podline: %s\n", run.Machine.Hostname, run.Machine.CPUs, run.Machine.Kernel, run.Podline)
	if quick {
		b.WriteString("- **quick run**: small N and short windows, a smoke run, not a measurement\n")
	}
	fmt.Fprintf(&b, "- each run: a fresh fake CRI (containerd-like latencies; PullImage answers after its default 1 ms) holding only %s, so `%s`, every pod's image (imagePullPolicy IfNotPresent), must be pulled; a fresh podline with its own directories and cgroup root. N host-network BestEffort pods written at once\n", scalePreload, image)
	fmt.Fprintf(&b, "- start: manifests written → all Running in /pods, polled every max(50 ms, N × 0.1 ms); agent CPU is utime+stime over that span, polls included (estimated beside, per run). PullImage: the fake CRI's calls at that moment; the fake counts per method, and the pods' image is the only one it lacked\n")
	fmt.Fprintf(&b, "- then %s alone: RSS (VmRSS) and Go heap (go_memstats_* of /metrics); 5 s later idle CPU over %s, nobody talking to the agent. Then %d GET /pods on the read-only port (measureGets: CPU per request, body size)\n", settle, window, scaleGets)
	b.WriteString("- delete: every manifest removed at once → the fake CRI lists no sandbox (in any state; asked over its socket, which costs the agent nothing) and then /pods lists no pod; agent CPU over that span\n")
	b.WriteString("- per pod: (figure − the same set's N=0 figure) / N; heap is go_memstats_heap_inuse_bytes. A set is one pass over every N\n")
	if ev := eventsOf(runs); ev != "stream" {
		fmt.Fprintf(&b, "- the fake CRI's container event stream: **%s** (`--events`; stream: follows every change, end: ends as soon as it opens, as k8s.io/cri-client's fake runtime's, unimplemented: as containerd 1.6)\n", ev)
	}
	b.WriteString("\n")

	keys, by := scaleByPods(runs)
	b.WriteString("## Medians (min–max over runs)\n\n")
	b.WriteString("| pods | runs | start s | start CPU s | PullImage calls | RSS MiB | heap alloc MiB | heap inuse MiB | RSS KiB/pod | heap KiB/pod | idle CPU % | GET /pods CPU ms | schedstat ms | GET /pods MB | delete s | delete CPU s | delete/start time | delete/start CPU |\n")
	b.WriteString("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	for _, n := range keys {
		rs := by[n]
		f := func(get func(scaleRun) float64, prec int) string { return medOrDash(of(rs, get), prec) }
		// The empty agent has nothing per pod and starts and deletes
		// nothing: its ratios would divide noise by noise.
		nonZero := func(get func(scaleRun) float64, prec int) string {
			if n == 0 {
				return "–"
			}
			return f(get, prec)
		}
		fmt.Fprintf(&b, "| %d | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n",
			n, len(rs),
			f(func(r scaleRun) float64 { return r.StartSec }, 1),
			f(func(r scaleRun) float64 { return r.StartCPUSec }, 2),
			f(pullCalls, 0),
			f(func(r scaleRun) float64 { return r.RSSMiB }, 1),
			f(func(r scaleRun) float64 { return r.HeapAllocMiB }, 1),
			f(func(r scaleRun) float64 { return r.HeapInuseMiB }, 1),
			nonZero(func(r scaleRun) float64 { return r.RSSPerPodKiB }, 1),
			nonZero(func(r scaleRun) float64 { return r.HeapPerPodKiB }, 1),
			f(func(r scaleRun) float64 { return r.IdleCPUPercent }, 2),
			f(func(r scaleRun) float64 { return r.Get.CPUms }, 2),
			f(func(r scaleRun) float64 { return r.Get.RunMs }, 2),
			f(func(r scaleRun) float64 { return float64(r.Get.Bytes) / 1e6 }, 2),
			f(func(r scaleRun) float64 { return r.DeleteSec }, 1),
			f(func(r scaleRun) float64 { return r.DeleteCPUSec }, 2),
			nonZero(func(r scaleRun) float64 { return ratioOf(r.DeleteSec, r.StartSec) }, 2),
			nonZero(func(r scaleRun) float64 { return ratioOf(r.DeleteCPUSec, r.StartCPUSec) }, 2))
	}

	writeCPUSplit(&b, keys, by)
	writeIdleFlat(&b, keys, by)

	if len(plots) > 0 {
		b.WriteString("\n## Plots\n\n")
		for _, p := range plots {
			fmt.Fprintf(&b, "![%s](%s)\n", strings.TrimSuffix(p, ".svg"), p)
		}
	}

	b.WriteString("\n## Every run\n\n")
	b.WriteString("| pods | set | start s | start CPU s | polls (CPU ≤ s) | PullImage | podline pulls / shared | RSS MiB | after idle | heap alloc / inuse / Go sys MiB | goroutines | RSS KiB/pod | heap KiB/pod | per pod vs | idle window s | idle CPU % | schedstat % | wakeups/s | GET /pods CPU ms | schedstat ms | net of idle | p50 ms | bytes | delete s | delete CPU s | delete polls |\n")
	b.WriteString("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	for _, r := range runs {
		fmt.Fprintf(&b, "| %d | %d | %.1f | %.2f | %d (%.2f) | %d | %.0f / %.0f | %.1f | %.1f | %.1f / %.1f / %.1f | %d | %.1f | %.1f | %s | %.1f | %.3f | %.3f | %.0f | %.2f | %.2f | %.2f | %.1f | %d | %.1f | %.2f | %d |\n",
			r.Pods, r.Set, r.StartSec, r.StartCPUSec, r.StartPolls, r.StartPollCPUSec, r.PullImage[image],
			r.AgentPulls, r.AgentPullsShared, r.RSSMiB, r.RSSAfterIdleMiB, r.HeapAllocMiB, r.HeapInuseMiB, r.GoSysMiB, r.Goroutines,
			r.RSSPerPodKiB, r.HeapPerPodKiB, orDash(r.PerPodBase), r.IdleWindowSec, r.IdleCPUPercent, r.IdleRunPercent, r.IdleWakeupsPerSec,
			r.Get.CPUms, r.Get.RunMs, r.Get.NetCPUms, r.Get.P50ms, r.Get.Bytes, r.DeleteSec, r.DeleteCPUSec, r.DeletePolls)
	}
	if len(failed) > 0 {
		b.WriteString("\n## Failed runs\n\n")
		for _, f := range failed {
			fmt.Fprintf(&b, "- %s\n", oneLine(f))
		}
	}
	return b.String()
}

// writeIdleFlat is the idle CPU at every N beside the empty agent's: the
// claim is that it does not grow with the pods. The difference is given
// for utime+stime and for schedstat, whose ns resolution shows what 10 ms
// ticks round to zero.
func writeIdleFlat(b *strings.Builder, keys []int, by map[int][]scaleRun) {
	b.WriteString("\n## Idle CPU against pods (should be flat)\n\n")
	b.WriteString("| pods | runs | idle CPU % of a core | schedstat % | wakeups/s | median − 0 pods, CPU % | median − 0 pods, schedstat % | runtime CPU % |\n| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	cpu := func(r scaleRun) float64 { return r.IdleCPUPercent }
	sched := func(r scaleRun) float64 { return r.IdleRunPercent }
	diff := func(rs []scaleRun, get func(scaleRun) float64) string {
		zero, ok := by[0]
		if !ok {
			return "–"
		}
		z, _, _ := median(of(zero, get))
		m, _, _ := median(of(rs, get))
		return fmt.Sprintf("%+.3f", m-z)
	}
	for _, n := range keys {
		rs := by[n]
		fmt.Fprintf(b, "| %d | %d | %s | %s | %s | %s | %s | %s |\n", n, len(rs),
			medCell(of(rs, cpu), 3),
			medCell(of(rs, sched), 3),
			medCell(of(rs, func(r scaleRun) float64 { return r.IdleWakeupsPerSec }), 1),
			diff(rs, cpu), diff(rs, sched),
			medCell(of(rs, func(r scaleRun) float64 { return r.RuntimeIdleCPUPercent }), 3))
	}
}

func orDash(s string) string {
	if s == "" {
		return "–"
	}
	return s
}

// writeScale writes scale.json, the plots and scale.md into out and
// returns the Markdown. A plot that fails is reported after the others
// and the report are written.
func writeScale(out string, s *suite, runs []scaleRun, failed []string) (string, error) {
	settle := scaleSettle
	if s.cfg.quick {
		settle = s.settle()
	}
	plots, plotErr := writeScalePlots(out, runs)
	md := scaleMarkdown(s.run, s.cfg.quick, settle, s.cfg.idleWindow, runs, failed, plots)
	err := writeCases(out, "scale", s.run, perPod(runs), failed, md)
	return md, errors.Join(err, plotErr)
}

// eventsOf names the event stream the runs had; runs from before the
// field was recorded had a working one.
func eventsOf(runs []scaleRun) string {
	seen := map[string]bool{}
	var names []string
	for _, r := range runs {
		ev := cmp.Or(r.Events, "stream")
		if !seen[ev] {
			seen[ev] = true
			names = append(names, ev)
		}
	}
	if len(names) == 0 {
		return "stream"
	}
	return strings.Join(names, ", ")
}
