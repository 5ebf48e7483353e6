package main

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/podline/podline/bench/internal/result"
)

// groupBy splits xs by key, keys in the order first seen.
func groupBy[K comparable, V any](xs []V, key func(V) K) ([]K, map[K][]V) {
	var keys []K
	by := map[K][]V{}
	for _, x := range xs {
		k := key(x)
		if _, ok := by[k]; !ok {
			keys = append(keys, k)
		}
		by[k] = append(by[k], x)
	}
	return keys, by
}

// median returns the median of xs and their range; xs is not changed.
func median(xs []float64) (med, lo, hi float64) {
	if len(xs) == 0 {
		return 0, 0, 0
	}
	s := slices.Sorted(slices.Values(xs))
	med = s[len(s)/2]
	if len(s)%2 == 0 {
		med = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return med, s[0], s[len(s)-1]
}

// medCell is "median (min–max)", or the one value.
func medCell(xs []float64, prec int) string {
	med, lo, hi := median(xs)
	m, l, h := fmt.Sprintf("%.*f", prec, med), fmt.Sprintf("%.*f", prec, lo), fmt.Sprintf("%.*f", prec, hi)
	if l == h {
		return m
	}
	return fmt.Sprintf("%s (%s–%s)", m, l, h)
}

// of maps xs through get.
func of[V any](xs []V, get func(V) float64) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = get(x)
	}
	return out
}

// getRow names one line of the GET table.
type getRow struct {
	agent      string
	pods       int
	port, path string
}

// getRows groups every successful GET measurement of runs.
func getRows(runs []serveRun) ([]getRow, map[getRow][]getCost) {
	type tagged struct {
		row getRow
		g   getCost
	}
	var all []tagged
	for _, r := range runs {
		for _, g := range r.Gets {
			if g.Error == "" {
				all = append(all, tagged{getRow{r.Agent, r.Pods, g.Port, g.Path}, g})
			}
		}
	}
	keys, by := groupBy(all, func(t tagged) getRow { return t.row })
	out := map[getRow][]getCost{}
	for k, ts := range by {
		for _, t := range ts {
			out[k] = append(out[k], t.g)
		}
	}
	return keys, out
}

func serveMarkdown(run *result.Run, settle, window time.Duration, runs []serveRun, failed []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# serve: what the agent's HTTP endpoints cost\n\n")
	fmt.Fprintf(&b, "- machine: %s, %d CPUs, kernel %s\n- podline: %s\n- kubelet: %s\n", run.Machine.Hostname, run.Machine.CPUs, run.Machine.Kernel, run.Podline, run.Kubelet)
	fmt.Fprintf(&b, "- pods as the density scenario makes them (one container, host network), fake CRI with containerd-like latencies; measured once every pod was Running and a settle of %s had passed\n", settle)
	fmt.Fprintf(&b, "- GETs: one warm-up, then %d in a row over one kept-alive connection (the warm-up opens it, TLS handshake included). Read-only port: the same handlers as the authenticated port, without TLS and authentication, for both agents. Authenticated (podline): TLS with a client certificate of the suite's CA, --authorization-mode=AlwaysAllow\n", serveRequests)
	fmt.Fprintf(&b, "- CPU per request: the agent's utime+stime (/proc/<pid>/stat) over the %d requests, divided by %d (10 ms ticks: 0.5 ms resolution); schedstat: the agent's threads' run time, same division; net: CPU less the agent's idle rate (measured over the settle before) for the requests' duration. Latency: client-side, request sent to body read; p99 of %d is the slowest. Size: the response body, uncompressed\n", serveRequests, serveRequests, serveRequests)
	fmt.Fprintf(&b, "- followers: one `/containerLogs/<ns>/<pod>/app?follow=true` per pod over TLS, each on its own connection, after 2 lines were written to each pod's CRI log; then 1 line appended to each. Windows of %s without followers and, after a settle as long, with all of them connected and idle, nobody else talking to the agent; goroutines are go_goroutines of /metrics, fds /proc/<pid>/fd, both at the window's end\n\n", window)

	keys, gets := getRows(runs)
	b.WriteString("## GET: medians (min–max over runs)\n\n")
	b.WriteString("| agent | pods | port | endpoint | runs | CPU ms/request | net of idle | schedstat ms/request | p50 ms | p99 ms | size KiB |\n")
	b.WriteString("| --- | ---: | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	for _, k := range keys {
		gs := gets[k]
		fmt.Fprintf(&b, "| %s | %d | %s | %s | %d | %s | %s | %s | %s | %s | %s |\n", k.agent, k.pods, k.port, k.path, len(gs),
			medCell(of(gs, func(g getCost) float64 { return g.CPUms }), 2),
			medCell(of(gs, func(g getCost) float64 { return g.NetCPUms }), 2),
			medCell(of(gs, func(g getCost) float64 { return g.RunMs }), 2),
			medCell(of(gs, func(g getCost) float64 { return g.P50ms }), 1),
			medCell(of(gs, func(g getCost) float64 { return g.P99ms }), 1),
			medCell(of(gs, func(g getCost) float64 { return float64(g.Bytes) / 1024 }), 0))
	}

	type agentRow struct {
		agent string
		pods  int
	}
	akeys, byAgent := groupBy(runs, func(r serveRun) agentRow { return agentRow{r.Agent, r.Pods} })
	b.WriteString("\n## Before the requests: medians\n\n")
	b.WriteString("| agent | pods | runs | all Running s | idle CPU % of a core |\n| --- | ---: | ---: | ---: | ---: |\n")
	for _, k := range akeys {
		rs := byAgent[k]
		fmt.Fprintf(&b, "| %s | %d | %d | %s | %s |\n", k.agent, k.pods, len(rs),
			medCell(of(rs, func(r serveRun) float64 { return r.StartSec }), 1),
			medCell(of(rs, func(r serveRun) float64 { return r.IdleCPUPercent }), 2))
	}

	var follows []serveRun
	for _, r := range runs {
		if r.Follow != nil {
			follows = append(follows, r)
		}
	}
	if len(follows) > 0 {
		fkeys, byPods := groupBy(follows, func(r serveRun) agentRow { return agentRow{r.Agent, r.Pods} })
		b.WriteString("\n## Followers: medians (min–max over runs)\n\n")
		b.WriteString("| agent | pods | runs | followers | got the existing lines | got the appended line | connect s | CPU % without | CPU % with | goroutines without / with / after | fds without / with / after | RSS MiB without / with | runs back to baseline |\n")
		b.WriteString("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n")
		for _, k := range fkeys {
			rs := byPods[k]
			f := func(get func(*followCost) float64, prec int) string {
				return medCell(of(rs, func(r serveRun) float64 { return get(r.Follow) }), prec)
			}
			back := 0
			for _, r := range rs {
				if r.Follow.Returned {
					back++
				}
			}
			fmt.Fprintf(&b, "| %s | %d | %d | %s | %s | %s | %s | %s | %s | %s / %s / %s | %s / %s / %s | %s / %s | %d/%d |\n",
				k.agent, k.pods, len(rs),
				f(func(c *followCost) float64 { return float64(c.Followers) }, 0),
				f(func(c *followCost) float64 { return float64(c.Existing) }, 0),
				f(func(c *followCost) float64 { return float64(c.Appended) }, 0),
				f(func(c *followCost) float64 { return c.ConnectSec }, 1),
				f(func(c *followCost) float64 { return c.Without.CPUPercent }, 2),
				f(func(c *followCost) float64 { return c.With.CPUPercent }, 2),
				f(func(c *followCost) float64 { return float64(c.Without.Goroutines) }, 0),
				f(func(c *followCost) float64 { return float64(c.With.Goroutines) }, 0),
				f(func(c *followCost) float64 { return float64(c.After.Goroutines) }, 0),
				f(func(c *followCost) float64 { return float64(c.Without.FDs) }, 0),
				f(func(c *followCost) float64 { return float64(c.With.FDs) }, 0),
				f(func(c *followCost) float64 { return float64(c.After.FDs) }, 0),
				f(func(c *followCost) float64 { return c.Without.RSSMiB }, 0),
				f(func(c *followCost) float64 { return c.With.RSSMiB }, 0),
				back, len(rs))
		}
	}

	b.WriteString("\n## Every run: GETs\n\n")
	b.WriteString("| agent | pods | run | port | endpoint | CPU ms/request | net of idle | schedstat ms/request | p50 ms | p99 ms | bytes | error |\n")
	b.WriteString("| --- | ---: | ---: | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |\n")
	for _, r := range runs {
		for _, g := range r.Gets {
			fmt.Fprintf(&b, "| %s | %d | %d | %s | %s | %.2f | %.2f | %.2f | %.1f | %.1f | %d | %s |\n",
				r.Agent, r.Pods, r.Run, g.Port, g.Path, g.CPUms, g.NetCPUms, g.RunMs, g.P50ms, g.P99ms, g.Bytes, oneLine(g.Error))
		}
	}
	if len(follows) > 0 {
		b.WriteString("\n## Every run: followers\n\n")
		b.WriteString("| agent | pods | run | followers | existing lines | appended line | connect s | CPU % without | CPU % with | goroutines w/o, with, after | fds w/o, with, after | RSS MiB w/o, with | back | podline's log warnings |\n")
		b.WriteString("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: |\n")
		for _, r := range follows {
			c := r.Follow
			fmt.Fprintf(&b, "| %s | %d | %d | %d | %d | %d | %.1f | %.2f | %.2f | %d, %d, %d | %d, %d, %d | %.0f, %.0f | %v | %d |\n",
				r.Agent, r.Pods, r.Run, c.Followers, c.Existing, c.Appended, c.ConnectSec, c.Without.CPUPercent, c.With.CPUPercent,
				c.Without.Goroutines, c.With.Goroutines, c.After.Goroutines, c.Without.FDs, c.With.FDs, c.After.FDs,
				c.Without.RSSMiB, c.With.RSSMiB, c.Returned, c.AgentLogErrors)
		}
		for _, r := range follows {
			c := r.Follow
			if len(c.Errors) == 0 && c.AgentLogFirst == "" {
				continue
			}
			fmt.Fprintf(&b, "\nFollower failures, %s %d pods run %d:\n\n", r.Agent, r.Pods, r.Run)
			for _, msg := range slices.Sorted(maps.Keys(c.Errors)) {
				fmt.Fprintf(&b, "- %d × %s\n", c.Errors[msg], oneLine(msg))
			}
			if c.AgentLogFirst != "" {
				fmt.Fprintf(&b, "- podline logged %d container-log warnings, the first: `%s`\n", c.AgentLogErrors, oneLine(c.AgentLogFirst))
			}
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

// oneLine keeps free text from breaking a table row.
func oneLine(s string) string {
	return strings.ReplaceAll(strings.Join(strings.Fields(s), " "), "|", `\|`)
}
