package main

import (
	"fmt"

	"github.com/podline/podline/bench/internal/result"
)

// ratios compares podline as shipped with the kubelet and with each
// ablation on the same runtime and pod count: a value below 1 means
// podline as shipped is faster or cheaper.
func ratios(r *result.Run) []result.Ratio {
	var out []result.Ratio
	density := map[result.Key]result.Density{}
	for _, d := range r.Density {
		density[d.Key] = d
	}
	idle := map[result.Key]result.Idle{}
	for _, i := range r.Idle {
		idle[i.Key] = i
	}
	for _, d := range r.Density {
		if d.Agent != result.AgentPodline || d.Mode != result.ModeDefault {
			continue
		}
		others := []result.Key{
			{Agent: result.AgentKubelet, Mode: result.ModeDefault, Runtime: d.Runtime, Pods: d.Pods},
			{Agent: result.AgentPodline, Mode: result.ModeQueueChannel, Runtime: d.Runtime, Pods: d.Pods},
			{Agent: result.AgentPodline, Mode: result.ModePLEGRelist, Runtime: d.Runtime, Pods: d.Pods},
			{Agent: result.AgentPodline, Mode: result.ModeStartsUnlimited, Runtime: d.Runtime, Pods: d.Pods},
		}
		for _, ok := range others {
			o, found := density[ok]
			if !found {
				continue
			}
			name := fmt.Sprintf("podline / %s, %s, %d pods", label(ok), d.Runtime, d.Pods)
			add := func(metric string, a, b float64) {
				if b > 0 {
					out = append(out, result.Ratio{Name: name, Metric: metric, A: d.Key, B: ok, AValue: a, BValue: b, Value: a / b})
				}
			}
			add("allRunningSec", d.AllRunningSec, o.AllRunningSec)
			add("startupP99Ms", d.Startup.P99, o.Startup.P99)
			add("cpuSec", d.CPUSec, o.CPUSec)
			// The observer's polls cost the kubelet more than podline:
			// the same ratio without them.
			add("cpuSecWithoutPolls", d.CPUSec-d.PollCPUSec, o.CPUSec-o.PollCPUSec)
			add("peakRssMiB", d.PeakRSSMiB, o.PeakRSSMiB)
			if di, ok1 := idle[d.Key]; ok1 {
				if oi, ok2 := idle[ok]; ok2 {
					add("idleCpuPercent", di.CPUPercent, oi.CPUPercent)
					add("idleRuntimeCpuPercent", di.RuntimeCPUPercent, oi.RuntimeCPUPercent)
				}
			}
		}
	}
	return out
}

func label(k result.Key) string {
	if k.Mode == result.ModeDefault {
		return k.Agent
	}
	return k.Agent + " --" + k.Mode
}
