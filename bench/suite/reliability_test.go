package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/podline/podline/bench/internal/result"
)

func TestRelPlan(t *testing.T) {
	f := func(quick bool, pods int, only []string, want ...string) {
		t.Helper()
		var got []string
		for _, c := range relPlan(quick, pods, only) {
			got = append(got, c.name())
			if (c.kind == relKill || c.kind == relIdle || c.kind == relTeardown) && pods > 0 && c.pods != pods {
				t.Fatalf("%s: %d pods, want %d", c.name(), c.pods, pods)
			}
		}
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Fatalf("plan %v, want %v", got, want)
		}
	}
	all := []string{"kill-9-at-25%", "kill-9-at-50%", "kill-9-at-90%", "kill-9-mid-teardown", "kill-9-idle", "hang-RunPodSandbox", "hang-ContainerStatus", "slow-runtime-1s", "containerd-restart", "containerd-kill-9"}
	f(false, 0, nil, all...)
	f(true, 50, nil, all...)
	f(false, 0, []string{"kill"}, all[:3]...)
	f(false, 0, []string{"kill-9-idle", "hang"}, "kill-9-idle", "hang-RunPodSandbox")
	f(false, 0, []string{"hang-status"}, "hang-ContainerStatus")
	f(false, 0, []string{"nope"})
	f(false, 0, []string{"containerd-kill-9"}, "containerd-kill-9")
}

func TestRelMarkdown(t *testing.T) {
	runs := []relRun{
		{Case: "kill-9-at-25%", Run: 1, Pods: 1000, Runtime: relRuntime, Pass: true, Verdict: "ok", KilledRunning: 250, KilledReady: 300, ConvergeSec: 2.5,
			CallsAfterKill: map[string]int64{"RunPodSandbox": 700}},
		{Case: "kill-9-at-25%", Run: 2, Pods: 1000, Pass: false, Verdict: "bad", KilledRunning: 260, KilledReady: 310, ConvergeSec: -1,
			ViolationSamples: []string{"duplicate: bench-00001-bench: 2 ready sandboxes a,b"}},
		{Case: "hang-RunPodSandbox", Run: 1, Pods: 100, Runtime: real, Pass: true, Verdict: "ok", Figures: map[string]float64{"hung_calls": 3},
			Observed: map[string]string{"status": "phase=Pending"}},
	}
	md := relMarkdown(&result.Run{}, &config{relRuns: 2}, runs, []string{"slow run 1: boom"})
	for _, want := range []string{
		"| kill-9-at-25% | fake-containerd | 1000 | 2 | 1/2 | 255 (250–260) / 305 (300–310) | 2.50, 1 never | RunPodSandbox 350 (0–700) |",
		"- run 2: **FAIL**: bad",
		"violation: `duplicate: bench-00001-bench: 2 ready sandboxes a,b`",
		"| hang-RunPodSandbox | containerd | 100 | 1 | 1/1 | – | – | – | – | hung_calls 3.0 |",
		"phase=Pending",
		"slow run 1: boom",
	} {
		if !strings.Contains(md, want) {
			t.Fatalf("report lacks %q:\n%s", want, md)
		}
	}
}

func TestRelPasses(t *testing.T) {
	plan := relPlan(false, 0, []string{"kill-9-idle", "hang"})
	var got []string
	for _, c := range relPasses(plan, 3, 1) {
		got = append(got, fmt.Sprintf("%s#%d/%d", c.name(), c.run, c.runs))
	}
	want := "kill-9-idle#1/3 hang-RunPodSandbox#1/1 kill-9-idle#2/3 kill-9-idle#3/3"
	if strings.Join(got, " ") != want {
		t.Fatalf("passes %v, want %s", got, want)
	}
}
