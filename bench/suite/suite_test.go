package main

import (
	"slices"
	"testing"

	"github.com/podline/podline/bench/internal/result"
)

func TestParseFlags(t *testing.T) {
	c, err := parseFlags([]string{"-quick", "-scenarios", "density,churn"})
	if err != nil {
		t.Fatal(err)
	}
	if !c.quick || !c.scenarios["density"] || !c.scenarios["churn"] || c.scenarios["kubelet"] || c.idleWindow == 0 {
		t.Fatalf("config %+v", c)
	}
	if _, err := parseFlags([]string{"-scenarios", "density,bogus"}); err == nil {
		t.Fatal("an unknown scenario was accepted")
	}
}

func TestPlans(t *testing.T) {
	for _, quick := range []bool{true, false} {
		seen := map[result.Key]bool{}
		for _, c := range plan(quick) {
			if !slices.Contains(allScenarios, c.scenario) {
				t.Errorf("quick=%v: case %+v has unknown scenario %q", quick, c.key, c.scenario)
			}
			if seen[c.key] {
				t.Errorf("quick=%v: case %+v twice", quick, c.key)
			}
			seen[c.key] = true
			if _, err := podlineArgs(c.key.Mode); c.key.Agent == podline && err != nil {
				t.Errorf("quick=%v: %v", quick, err)
			}
			if quick && c.key.Pods > 200 {
				t.Errorf("quick plan runs %d pods", c.key.Pods)
			}
		}
	}
}

func TestRatios(t *testing.T) {
	pl := key(podline, dflt, fakeC, 100)
	kl := key(kubelet, dflt, fakeC, 100)
	ch := key(podline, result.ModeQueueChannel, fakeC, 100)
	r := &result.Run{
		Density: []result.Density{
			{Key: pl, AllRunningSec: 1, CPUSec: 0.5, PeakRSSMiB: 40, Startup: result.Quantiles{P99: 100}},
			{Key: kl, AllRunningSec: 4, CPUSec: 2, PeakRSSMiB: 100, Startup: result.Quantiles{P99: 400}},
			{Key: ch, AllRunningSec: 2, CPUSec: 0.5, PeakRSSMiB: 0},
			// No podline twin: no ratio.
			{Key: key(kubelet, dflt, fakeZ, 100), AllRunningSec: 3},
		},
		Idle: []result.Idle{{Key: pl, CPUPercent: 0.01}, {Key: kl, CPUPercent: 2}},
	}
	got := map[string]float64{}
	for _, x := range ratios(r) {
		got[label(x.B)+" "+x.Metric] = x.Value
	}
	want := map[string]float64{
		"kubelet allRunningSec":                      1.0 / 4,
		"kubelet startupP99Ms":                       0.25,
		"kubelet cpuSec":                             0.25,
		"kubelet cpuSecWithoutPolls":                 0.25,
		"kubelet peakRssMiB":                         0.4,
		"kubelet idleCpuPercent":                     0.005,
		"podline --queue=channel allRunningSec":      0.5,
		"podline --queue=channel cpuSec":             1,
		"podline --queue=channel cpuSecWithoutPolls": 1,
	}
	for k, v := range want {
		if g, ok := got[k]; !ok || g != v {
			t.Errorf("%s = %v (present %v), want %v", k, g, ok, v)
		}
	}
	// Zero denominators give no ratio rather than +Inf.
	if _, ok := got["podline --queue=channel peakRssMiB"]; ok {
		t.Error("ratio against a zero value")
	}
	if len(got) != len(want) {
		t.Errorf("ratios %v, want exactly %v", got, want)
	}
}
