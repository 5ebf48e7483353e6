package main

import (
	"strings"
	"testing"

	"github.com/podline/podline/bench/internal/result"
)

func TestRealPlanInterleavesAndFilters(t *testing.T) {
	plan := realPlan(false, true, 3, 100, -1, "")
	// Two 100-pod shapes × 3 rounds × 4 agents, round by round.
	if len(plan) != 24 {
		t.Fatalf("%d runs, want 24", len(plan))
	}
	for i, c := range plan[:8] {
		if want := i/4 + 1; c.Run != want {
			t.Fatalf("run %d is in round %d, want %d: rounds interleave the agents", i, c.Run, want)
		}
	}
	if plan[0].Agent != kubelet || plan[1].Agent != podline {
		t.Fatalf("a round starts %s, %s; want the kubelet then podline", plan[0].Agent, plan[1].Agent)
	}
	only := realPlan(false, true, 2, 30, -1, "podline:start-concurrency=0@podline")
	if len(only) != 2 || only[0].Mode != result.ModeStartsUnlimited || only[0].Shape.Pods != 30 {
		t.Fatalf("-real-agents/-real-pods kept %+v", only)
	}
	if rated := realPlan(false, true, 1, 0, 5, ""); len(rated) != 4 || rated[0].Shape.Rate != 5 {
		t.Fatalf("-real-rate 5 kept %+v", rated)
	}
	if noKube := realPlan(true, false, 3, 0, -1, ""); len(noKube) != 3 {
		t.Fatalf("quick without the kubelet: %d runs, want podline's 3 once", len(noKube))
	}
}

func TestRealMarkdownRatios(t *testing.T) {
	run := func(agent, mode, config string, p50, all, cpu float64) realRun {
		return realRun{
			realCase:      realCase{Agent: agent, Mode: mode, Config: config, Shape: realShape{Pods: 100}},
			AllRunningSec: all, Startup: result.Quantiles{P50: p50}, AgentCPUSec: cpu,
			RuntimeCalls: map[string]float64{"runpodsandbox": 1, "podsandboxstatus": 2},
		}
	}
	runs := []realRun{
		run(kubelet, dflt, cfgDefault, 10000, 12, 2.0),
		run(kubelet, dflt, cfgDefault, 12000, 14, 3.0),
		run(kubelet, dflt, cfgDefault, 11000, 13, 2.5),
		run(podline, dflt, cfgPodline, 5000, 10, 0.5),
		run(podline, dflt, cfgPodline, 4000, 9, 0.7),
		run(podline, dflt, cfgPodline, 6000, 11, 0.6),
	}
	md := realMarkdown(&result.Run{}, runs, nil)
	for _, want := range []string{
		"| kubelet | default | 3 | 13.0 (12.0–14.0) | 11000 (10000–12000) |",
		"per-pod p50 ×0.45 (target ≤ 0.50: met)",
		"all Running ×0.77 (target ≤ 0.80: met)",
		"agent CPU ×0.24 (target ≤ 0.25: met)",
		"- podline on containerd/podline: 3.0 (podsandboxstatus 2.00, runpodsandbox 1.00).",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q:\n%s", want, md)
		}
	}
}
