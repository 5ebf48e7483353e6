package main

import (
	"strings"
	"testing"

	"github.com/podline/podline/bench/internal/result"
)

func TestClusterOptIn(t *testing.T) {
	c, err := parseFlags(nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.scenarios["cluster"] {
		t.Error("cluster runs by default; make bench would wait for a control plane")
	}
	if c.clusterPods != 1000 || c.clusterRuns != 3 {
		t.Errorf("defaults: %d pods, %d runs", c.clusterPods, c.clusterRuns)
	}
	c, err = parseFlags([]string{"-quick", "-scenarios", "cluster"})
	if err != nil {
		t.Fatal(err)
	}
	if !c.scenarios["cluster"] || c.clusterPods != 50 || c.clusterRuns != 1 {
		t.Errorf("quick cluster: %+v", c)
	}
	for _, bad := range [][]string{{"-cluster-shapes", "mixed,odd"}, {"-cluster-agents", "crio"}} {
		if _, err := parseFlags(append([]string{"-scenarios", "cluster"}, bad...)); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
}

func TestClusterPlan(t *testing.T) {
	got := clusterPlan(true, 2, 100, "podline,kubelet", "mixed,bare")
	var order []string
	for _, c := range got {
		order = append(order, c.Shape+"/"+c.Agent+"/"+string(rune('0'+c.Run)))
		if c.Pods != 100 || c.Runs != 2 {
			t.Errorf("case %+v", c)
		}
	}
	want := "mixed/podline/1 mixed/kubelet/1 mixed/podline/2 mixed/kubelet/2 bare/podline/1 bare/kubelet/1 bare/podline/2 bare/kubelet/2"
	if strings.Join(order, " ") != want {
		t.Errorf("order\n got %s\nwant %s", strings.Join(order, " "), want)
	}
	if got := clusterPlan(false, 3, 10, "podline,kubelet", "mixed"); len(got) != 3 {
		t.Errorf("without the kubelet binary: %d runs, want podline's 3", len(got))
	}
	if got := clusterPlan(true, 1, 10, " kubelet ", "bare"); len(got) != 1 || got[0].Agent != kubelet || got[0].Shape != shapeBare {
		t.Errorf("filtered plan %+v", got)
	}
	d, b := clusterCase{Pods: 1001, Shape: shapeMixed}.split()
	if d != 500 || b != 501 {
		t.Errorf("mixed split of 1001: %d + %d", d, b)
	}
	if d, b := (clusterCase{Pods: 10, Shape: shapeBare}).split(); d != 0 || b != 10 {
		t.Errorf("bare split: %d + %d", d, b)
	}
}

func TestClusterVerdict(t *testing.T) {
	run := func(agent string, allRunning float64, requests int) clusterRun {
		return clusterRun{
			clusterCase:   clusterCase{Agent: agent, Pods: 100, Shape: shapeMixed},
			AllRunningSec: allRunning,
			StartupSLI:    result.Quantiles{P50: allRunning * 100},
			Startup:       result.Quantiles{P50: allRunning * 50},
			Requests:      &requestCount{Total: requests},
		}
	}
	runs := []clusterRun{
		run(podline, 2, 250), run(kubelet, 10, 600),
		run(podline, 3, 310), run(kubelet, 12, 620),
		run(podline, 9, 290), run(kubelet, 11, 610),
	}
	groups := clusterGroups(runs)
	if len(groups) != 1 || len(groups[0]) != 2 || groups[0][0].agent != podline || len(groups[0][1].runs) != 3 {
		t.Fatalf("groups %+v", groups)
	}
	v := strings.Join(clusterVerdict(groups[0]), "\n")
	// Medians: podline 3 s against 11 s is ×0.27, over ×0.25; 2.90
	// requests per pod is under 3.
	// podline's 290 requests: (290 − 100) / 50 = 3.8 s, over its 3 s.
	for _, want := range []string{"= ×0.27 (target ≤ ×0.25: not met)", "podline 2.90 (target ≤ 3: met)", "SLI ×0.27",
		"podline: its start's requests take at least 3.8 s at 50 requests/s (burst 100), 127 % of"} {
		if !strings.Contains(v, want) {
			t.Errorf("verdict lacks %q:\n%s", want, v)
		}
	}
	md := clusterMarkdown(&result.Run{}, true, runs, []string{"cluster x: boom\nmore"})
	for _, want := range []string{"## 100 pods, mixed", "| podline | 3 | 3.00 (2.00–9.00) |", "## Failed runs", "- cluster x: boom more"} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q", want)
		}
	}
	// Without an audit log nothing is claimed about requests.
	runs[0].Requests = nil
	if v := strings.Join(clusterVerdict(clusterGroups(runs)[0]), "\n"); strings.Contains(v, "requests") {
		t.Errorf("a verdict on requests with a run uncounted:\n%s", v)
	}
}

func TestVerbSummary(t *testing.T) {
	c := &requestCount{ByVerbResource: map[string]int{"patch pods/status": 200, "get pods": 100, "list services": 0}}
	if got, want := verbSummary(c, 100), "patch pods/status 2.00, get pods 1.00"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if got := verbSummary(nil, 100); got != "not counted" {
		t.Errorf("nil: %q", got)
	}
}
