package main

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/podline/podline/bench/internal/result"
)

// Targets of the cluster scenario: podline's all-Running time against the
// kubelet's (ratio of medians), and podline's API requests per pod over
// the start, events left out.
const (
	clusterRunningTarget  = 0.25
	clusterRequestsTarget = 3.0
)

// Both agents run with their default client rate limit, 50 requests/s
// with a burst of 100: N pods × r requests take at least
// (N·r − burst) / QPS, whatever the agent does between them.
const (
	agentQPS   = 50.0
	agentBurst = 100.0
)

// rateFloor is that least time in seconds for a run's requests.
func rateFloor(c *requestCount) float64 {
	if c == nil {
		return 0
	}
	return max(0, float64(c.Total)-agentBurst) / agentQPS
}

// clusterGroup is one agent's runs in one shape.
type clusterGroup struct {
	agent, shape string
	pods         int
	runs         []clusterRun
}

// clusterGroups splits runs by shape and pods (in the order they ran),
// then by agent, podline first.
func clusterGroups(runs []clusterRun) [][]clusterGroup {
	type shapeKey struct {
		shape string
		pods  int
	}
	keys, by := groupBy(runs, func(r clusterRun) shapeKey { return shapeKey{r.Shape, r.Pods} })
	var out [][]clusterGroup
	for _, k := range keys {
		var gs []clusterGroup
		for _, a := range []string{podline, kubelet} {
			g := clusterGroup{agent: a, shape: k.shape, pods: k.pods}
			for _, r := range by[k] {
				if r.Agent == a {
					g.runs = append(g.runs, r)
				}
			}
			if len(g.runs) > 0 {
				gs = append(gs, g)
			}
		}
		out = append(out, gs)
	}
	return out
}

// clusterCell is medCell, or "–" when a run did not measure it (< 0).
func clusterCell(rs []clusterRun, get func(clusterRun) float64, prec int) string {
	xs := of(rs, get)
	if len(xs) == 0 || slices.Min(xs) < 0 {
		return "–"
	}
	return medCell(xs, prec)
}

func startRequests(r clusterRun) float64  { return requestsPerPod(r.Requests, r.Pods) }
func deleteRequests(r clusterRun) float64 { return requestsPerPod(r.DeleteRequests, r.Pods) }

// clusterVerdict compares podline's medians with the targets: the
// all-Running ratio to the kubelet's (when both ran) and the requests per
// pod (when counted). Each part says met or not met.
func clusterVerdict(gs []clusterGroup) []string {
	var pl, kl []clusterRun
	for _, g := range gs {
		if g.agent == podline {
			pl = g.runs
		} else {
			kl = g.runs
		}
	}
	if len(pl) == 0 {
		return nil
	}
	var out []string
	if len(kl) > 0 {
		p, _, _ := median(of(pl, func(r clusterRun) float64 { return r.AllRunningSec }))
		k, _, _ := median(of(kl, func(r clusterRun) float64 { return r.AllRunningSec }))
		ratio := ratioOf(p, k)
		out = append(out, fmt.Sprintf("all Running: podline %.2f s ÷ kubelet %.2f s = ×%.2f (target ≤ ×%.2f: %s)",
			p, k, ratio, clusterRunningTarget, metOrNot(ratio <= clusterRunningTarget)))
		ps, _, _ := median(of(pl, func(r clusterRun) float64 { return r.StartupSLI.P50 }))
		ks, _, _ := median(of(kl, func(r clusterRun) float64 { return r.StartupSLI.P50 }))
		pw, _, _ := median(of(pl, func(r clusterRun) float64 { return r.Startup.P50 }))
		kw, _, _ := median(of(kl, func(r clusterRun) float64 { return r.Startup.P50 }))
		out = append(out, fmt.Sprintf("startup p50: SLI ×%.2f, from the watch's first sight ×%.2f (no target)", ratioOf(ps, ks), ratioOf(pw, kw)))
	}
	if xs := of(pl, startRequests); slices.Min(xs) >= 0 {
		m, _, _ := median(xs)
		out = append(out, fmt.Sprintf("API requests per pod over the start, events left out: podline %.2f (target ≤ %.0f: %s)",
			m, clusterRequestsTarget, metOrNot(m <= clusterRequestsTarget)))
		for _, g := range gs {
			floor, _, _ := median(of(g.runs, func(r clusterRun) float64 { return rateFloor(r.Requests) }))
			run, _, _ := median(of(g.runs, func(r clusterRun) float64 { return r.AllRunningSec }))
			out = append(out, fmt.Sprintf("%s: its start's requests take at least %.1f s at %.0f requests/s (burst %.0f), %.0f %% of its all-Running time",
				g.agent, floor, agentQPS, agentBurst, 100*ratioOf(floor, run)))
		}
	}
	return out
}

// verbSummary is a count per pod by verb and resource, largest first,
// those under 0.005 per pod left out.
func verbSummary(c *requestCount, pods int) string {
	if c == nil || pods == 0 {
		return "not counted"
	}
	return perPodList(func(yield func(string, float64) bool) {
		for k, n := range c.ByVerbResource {
			if !yield(k, float64(n)/float64(pods)) {
				return
			}
		}
	})
}

// perPodList renders name value pairs, largest first, then by name.
func perPodList(pairs func(yield func(string, float64) bool)) string {
	type kv struct {
		k string
		v float64
	}
	var xs []kv
	for k, v := range pairs {
		if v >= 0.005 {
			xs = append(xs, kv{k, v})
		}
	}
	slices.SortFunc(xs, func(a, b kv) int {
		if a.v != b.v {
			if a.v > b.v {
				return -1
			}
			return 1
		}
		return strings.Compare(a.k, b.k)
	})
	var parts []string
	for _, x := range xs {
		parts = append(parts, fmt.Sprintf("%s %.2f", x.k, x.v))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// medianByKey is, for every key of the runs' counts, the median over the
// runs of its count per pod (a run without the key counts 0).
func medianByKey(rs []clusterRun, get func(clusterRun) *requestCount, field func(*requestCount) map[string]int) func(yield func(string, float64) bool) {
	keys := map[string]bool{}
	for _, r := range rs {
		if c := get(r); c != nil {
			for k := range field(c) {
				keys[k] = true
			}
		}
	}
	return func(yield func(string, float64) bool) {
		for _, k := range slices.Sorted(maps.Keys(keys)) {
			m, _, _ := median(of(rs, func(r clusterRun) float64 {
				c := get(r)
				if c == nil {
					return 0
				}
				return float64(field(c)[k]) / float64(r.Pods)
			}))
			if !yield(k, m) {
				return
			}
		}
	}
}

func clusterMarkdown(run *result.Run, audited bool, runs []clusterRun, failed []string) string {
	var b strings.Builder
	b.WriteString("# cluster: podline and the kubelet as nodes of a real control plane\n\n")
	fmt.Fprintf(&b, "- machine: %s, %d CPUs, kernel %s, cgroup %s\n- podline: %s\n- kubelet: %s; control plane: scripts/controlplane.sh (etcd, kube-apiserver, kube-controller-manager, kube-scheduler of the same release, on this machine)\n",
		run.Machine.Hostname, run.Machine.CPUs, run.Machine.Kernel, run.Machine.CgroupMode, run.Podline, orDash(run.Kubelet))
	if run.Quick {
		b.WriteString("- **quick run**: small N, a smoke run, not a measurement\n")
	}
	b.WriteString("- each run: a fresh fake CRI (containerd-like latencies, busybox preloaded) and the agent as a fresh Node with its own node identity (system:node:NAME), labelled for a nodeSelector, in a namespace of its own; Node, Lease and namespace deleted afterwards. podline and the kubelet with their default API rate limits (50 QPS, burst 100). Agents alternate round by round\n")
	b.WriteString("- pods: host-network BestEffort busybox (`sleep`), no service account token, created at once by the suite's client (32 creates in flight). mixed: a Deployment of N/2 replicas (the controller-manager creates the pods, the scheduler binds them by nodeSelector) and N/2 bare pods with spec.nodeName; bare: all N with spec.nodeName\n")
	b.WriteString("- timed by an informer on the namespace's pods. all Running: first create → the watch has seen every pod Running with its container ready. SLI: per pod, metadata.creationTimestamp (whole seconds, so up to 1 s early) → first seen so, as the pod startup SLI counts it; watch: the same from the watch's first sight of the pod, milliseconds after its create, for the bare pods and the Deployment's apart too\n")
	b.WriteString("- CPU: utime+stime over first create → all Running; peak RSS is the agent's VmHWM then. delete: the Deployment scaled to 0 and the bare pods deleted in one request → the watch has seen every pod gone (the agent stops each and removes its object)\n")
	if audited {
		b.WriteString("- API requests: kube-apiserver's audit log, every request of the node's user (system:node:NAME) received in the span, once each (a watch counts once), events left out; the agent's periodic Lease and Node status writes fall in the span too\n")
	} else {
		b.WriteString("- API requests: not counted, the control plane ran without the suite's audit log (it was up before the suite)\n")
	}
	b.WriteString("\nEach cell is the median of the runs with (min–max).\n")
	for _, gs := range clusterGroups(runs) {
		fmt.Fprintf(&b, "\n## %d pods, %s\n\n", gs[0].pods, gs[0].shape)
		b.WriteString("| agent | runs | all Running s | SLI p50 ms | SLI p90 ms | SLI p99 ms | watch p50 ms | watch p99 ms | bare p50 ms | Deployment p50 ms | API requests/pod | agent CPU s | agent peak RSS MiB | kube-apiserver CPU s | controller-manager + scheduler CPU s | delete s | delete API requests/pod |\n")
		b.WriteString("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
		for _, g := range gs {
			rs := g.runs
			q := func(get func(clusterRun) result.Quantiles, p func(result.Quantiles) float64) string {
				return clusterCell(rs, func(r clusterRun) float64 { return p(get(r)) }, 0)
			}
			sli := func(r clusterRun) result.Quantiles { return r.StartupSLI }
			watch := func(r clusterRun) result.Quantiles { return r.Startup }
			p50 := func(q result.Quantiles) float64 { return q.P50 }
			deployCell := "–"
			if d, _ := rs[0].split(); d > 0 {
				deployCell = q(func(r clusterRun) result.Quantiles { return r.StartupDeployment }, p50)
			}
			fmt.Fprintf(&b, "| %s | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n",
				g.agent, len(rs),
				clusterCell(rs, func(r clusterRun) float64 { return r.AllRunningSec }, 2),
				q(sli, p50), q(sli, func(q result.Quantiles) float64 { return q.P90 }), q(sli, func(q result.Quantiles) float64 { return q.P99 }),
				q(watch, p50), q(watch, func(q result.Quantiles) float64 { return q.P99 }),
				q(func(r clusterRun) result.Quantiles { return r.StartupBare }, p50), deployCell,
				clusterCell(rs, startRequests, 2),
				clusterCell(rs, func(r clusterRun) float64 { return r.AgentCPUSec }, 2),
				clusterCell(rs, func(r clusterRun) float64 { return r.AgentPeakRSSMiB }, 0),
				clusterCell(rs, func(r clusterRun) float64 { return r.APIServerCPUSec }, 2),
				clusterCell(rs, func(r clusterRun) float64 { return r.ControllersCPUSec }, 2),
				clusterCell(rs, func(r clusterRun) float64 { return r.DeleteSec }, 2),
				clusterCell(rs, deleteRequests, 2))
		}
		if audited {
			b.WriteString("\nAPI requests per pod by verb and resource, events left out (median of the runs):\n\n")
			for _, g := range gs {
				verbs := func(get func(clusterRun) *requestCount) string {
					return perPodList(medianByKey(g.runs, get, func(c *requestCount) map[string]int { return c.ByVerb }))
				}
				full := func(get func(clusterRun) *requestCount) string {
					return perPodList(medianByKey(g.runs, get, func(c *requestCount) map[string]int { return c.ByVerbResource }))
				}
				start := func(r clusterRun) *requestCount { return r.Requests }
				del := func(r clusterRun) *requestCount { return r.DeleteRequests }
				fmt.Fprintf(&b, "- %s, start: %s; by verb: %s.\n", g.agent, full(start), verbs(start))
				fmt.Fprintf(&b, "- %s, delete: %s; by verb: %s.\n", g.agent, full(del), verbs(del))
			}
		}
		if v := clusterVerdict(gs); len(v) > 0 {
			b.WriteString("\n")
			for _, line := range v {
				fmt.Fprintf(&b, "- %s.\n", line)
			}
		}
	}
	if len(runs) > 0 {
		b.WriteString("\n## Every run\n\n")
		b.WriteString("| agent | pods | shape | round | node | creates s | all Running s | SLI p50/p90/p99 ms | watch p50/p99 ms | API req/pod | events left out | agent CPU s | peak RSS MiB | kube-apiserver CPU s | delete s | delete CPU s | delete req/pod |\n")
		b.WriteString("|---|---:|---|---:|---|---:|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|\n")
		for _, r := range runs {
			events := "–"
			if r.Requests != nil {
				events = fmt.Sprint(r.Requests.Events)
			}
			fmt.Fprintf(&b, "| %s | %d | %s | %d | %s | %.2f | %.2f | %.0f/%.0f/%.0f | %.0f/%.0f | %s | %s | %.2f | %.0f | %.2f | %.2f | %.2f | %s |\n",
				r.Agent, r.Pods, r.Shape, r.Run, r.Node, r.CreateSec, r.AllRunningSec,
				r.StartupSLI.P50, r.StartupSLI.P90, r.StartupSLI.P99, r.Startup.P50, r.Startup.P99,
				countCell(startRequests(r)), events, r.AgentCPUSec, r.AgentPeakRSSMiB, r.APIServerCPUSec,
				r.DeleteSec, r.DeleteAgentCPUSec, countCell(deleteRequests(r)))
		}
	}
	if len(failed) > 0 {
		b.WriteString("\n## Failed runs\n\n")
		for _, f := range failed {
			fmt.Fprintf(&b, "- %s\n", oneLine(f))
		}
	}
	return b.String()
}

func countCell(v float64) string {
	if v < 0 {
		return "–"
	}
	return fmt.Sprintf("%.2f", v)
}
