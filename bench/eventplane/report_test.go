package main

import (
	"math"
	"strings"
	"testing"
)

func TestPercentile(t *testing.T) {
	xs := []float64{5, 1, 4, 2, 3, 10, 9, 8, 7, 6}
	f := func(p, want float64) {
		t.Helper()
		if got := percentile(xs, p); got != want {
			t.Fatalf("p%g = %g, want %g", p, got, want)
		}
	}
	f(50, 5)
	f(90, 9)
	f(99, 10)
	f(100, 10)
	f(1, 1)
	if !math.IsNaN(percentile(nil, 50)) {
		t.Fatal("percentile of nothing must be NaN")
	}
	if xs[0] != 5 {
		t.Fatal("percentile reordered its input")
	}
}

func TestFmtRatio(t *testing.T) {
	f := func(a, b float64, want string) {
		t.Helper()
		if got := fmtRatio(a, b); got != want {
			t.Fatalf("fmtRatio(%g, %g) = %q, want %q", a, b, got, want)
		}
	}
	f(564, 4.86, "116×")
	f(2.19, 1.79, "1.22×")
	f(0.2, 0, "∞")
	f(0, 0, "1×")
	f(math.NaN(), 1, "–")
}

func TestMarkdownTable(t *testing.T) {
	r := &results{
		Config: configSummary{ExitPods: 2, IdlePods: []int{30, 100}},
		Modes: []*modeResult{
			{Mode: "events", Exit: &exitResult{P50MS: 5, P90MS: 8, P99MS: 10, MaxMS: 10, InPodlineP50MS: 0.5, InPodlineP99MS: 2}, Idle: []*idleResult{
				{Pods: 30, PodlineCPUPct: 0, PodlineSchedCPUPct: 0.01, ContainerdCPUPct: 5, PodlineCtxSwPerS: 2},
			}},
			{Mode: "relist", Exit: &exitResult{P50MS: 500, P90MS: 900, P99MS: 1000, MaxMS: 1000, InPodlineP50MS: 500, InPodlineP99MS: 1000}, Idle: []*idleResult{
				{Pods: 30, PodlineCPUPct: 0.2, PodlineSchedCPUPct: 0.25, ContainerdCPUPct: 6, PodlineCtxSwPerS: 50},
			}},
		},
	}
	md := markdown(r)
	f := func(want string) {
		t.Helper()
		if !strings.Contains(md, want) {
			t.Fatalf("markdown lacks %q:\n%s", want, md)
		}
	}
	f("| mode | exit p50 | p90 | p99 | max | in podline p50 | p99 | podline CPU N=30 | N=100 | containerd CPU N=30 | N=100 | podline ctx sw/s N=30 | N=100 |")
	f("| events | 5.00 ms | 8.00 ms | 10.0 ms | 10.0 ms | 0.50 ms | 2.00 ms | 0.00 % (0.010) | – | 5.00 % | – | 2.0 | – |")
	// The podline CPU ratio comes from schedstat (0.25/0.01), not from
	// the ticks (0.2/0, which says nothing).
	f("| relist / events | 100× | 112× | 100× | 100× | 1000× | 500× | 25× | – | 1.20× | – | 25× | – |")
}

func TestQuantileFromBuckets(t *testing.T) {
	bs := []bucket{{upper: 0.001, count: 50}, {upper: 0.002, count: 49}, {upper: 0.5, count: 1}}
	if got := quantileMS(bs, 0.5); got != 1 {
		t.Fatalf("p50 = %v ms, want 1", got)
	}
	if got := quantileMS(bs, 0.99); got != 2 {
		t.Fatalf("p99 = %v ms, want 2", got)
	}
	if got := quantileMS(bs, 1); got != 500 {
		t.Fatalf("max = %v ms, want 500", got)
	}
	if got := quantileMS(nil, 0.5); got != 0 {
		t.Fatalf("empty = %v", got)
	}
}
