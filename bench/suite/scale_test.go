package main

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/podline/podline/bench/internal/result"
)

func TestScalePlan(t *testing.T) {
	all := scalePlan(false, 2, -1)
	want := []scaleCase{{0, 1, 2}, {1000, 1, 2}, {3000, 1, 2}, {10000, 1, 2}, {0, 2, 2}, {1000, 2, 2}, {3000, 2, 2}, {10000, 2, 2}}
	if len(all) != len(want) {
		t.Fatalf("plan = %v", all)
	}
	for i := range want {
		if all[i] != want[i] {
			t.Fatalf("plan[%d] = %v, want %v (sets interleaved over N)", i, all[i], want[i])
		}
	}
	only := scalePlan(false, 3, 0)
	if len(only) != 3 || only[0].pods != 0 || only[2].set != 3 {
		t.Errorf("-scale-pods 0: %v", only)
	}
	if got := scalePlan(true, 1, 1000); len(got) != 0 {
		t.Errorf("quick plan has 1000 pods: %v", got)
	}
	for _, c := range scalePlan(true, 1, -1) {
		if c.pods > 200 {
			t.Errorf("quick plan runs %d pods", c.pods)
		}
	}
}

func TestScaleFlags(t *testing.T) {
	c, err := parseFlags([]string{"-scenarios", "scale"})
	if err != nil || c.scaleRuns != 3 || c.scalePods != -1 || !c.scenarios["scale"] {
		t.Fatalf("defaults: %+v %v", c, err)
	}
	c, err = parseFlags([]string{"-quick", "-scale-pods", "0"})
	if err != nil || c.scaleRuns != 1 || c.scalePods != 0 {
		t.Fatalf("quick: %+v %v", c, err)
	}
	if _, err := parseFlags([]string{"-scale-runs", "-1"}); err == nil {
		t.Error("-scale-runs -1 was accepted")
	}
}

func TestPerPod(t *testing.T) {
	runs := []scaleRun{
		{Pods: 0, Set: 1, RSSMiB: 20, HeapInuseMiB: 5},
		{Pods: 1000, Set: 1, RSSMiB: 30, HeapInuseMiB: 7},
		{Pods: 0, Set: 2, RSSMiB: 24, HeapInuseMiB: 7},
		{Pods: 1000, Set: 3, RSSMiB: 32, HeapInuseMiB: 8}, // its set's N=0 run failed
	}
	got := perPod(runs)
	if runs[1].RSSPerPodKiB != 0 {
		t.Fatal("perPod changed its argument")
	}
	if r := got[1]; r.PerPodBase != baseSet || r.RSSPerPodKiB != 10*1024/1000. || r.HeapPerPodKiB != 2*1024/1000. {
		t.Errorf("same set: %+v", r)
	}
	if r := got[3]; r.PerPodBase != baseMedian || r.RSSPerPodKiB != (32-22)*1024/1000. || r.HeapPerPodKiB != (8-6)*1024/1000. {
		t.Errorf("median of N=0: %+v", r)
	}
	if r := got[0]; r.PerPodBase != "" || r.RSSPerPodKiB != 0 {
		t.Errorf("N=0 run: %+v", r)
	}
	alone := perPod([]scaleRun{{Pods: 100, Set: 1, RSSMiB: 10, HeapInuseMiB: 1}})
	if r := alone[0]; r.PerPodBase != baseNone || r.RSSPerPodKiB != 10*1024/100. {
		t.Errorf("no N=0 run: %+v", r)
	}
}

func TestMemStatsOf(t *testing.T) {
	m, err := parseMetrics(strings.NewReader(`go_memstats_heap_alloc_bytes 1048576
go_memstats_heap_inuse_bytes 2097152
go_memstats_sys_bytes 4194304
go_goroutines 42
podline_image_pulls_total{result="success"} 1
podline_image_pulls_shared_total 49
`))
	if err != nil {
		t.Fatal(err)
	}
	ms, err := memStatsOf(m)
	if err != nil || ms.heapAlloc != 1<<20 || ms.heapInuse != 2<<20 || ms.sys != 4<<20 || ms.goroutines != 42 || ms.pulls != 1 || ms.pullsShared != 49 {
		t.Fatalf("memStatsOf = %+v, %v", ms, err)
	}
	m, _ = parseMetrics(strings.NewReader("go_goroutines 3\n"))
	if _, err := memStatsOf(m); err == nil || !strings.Contains(err.Error(), "go_memstats_heap_alloc_bytes") {
		t.Errorf("missing heap gauges: %v", err)
	}
}

func TestScaleReport(t *testing.T) {
	run := func(pods, set int, rss, idle, start, del float64) scaleRun {
		return scaleRun{Pods: pods, Set: set, RSSMiB: rss, HeapInuseMiB: rss / 2, IdleCPUPercent: idle,
			StartSec: start, StartCPUSec: start / 2, DeleteSec: del, DeleteCPUSec: del / 2,
			StartSysCPUSec: start / 4, DeleteSysCPUSec: del / 4,
			PullImage: map[string]int64{image: int64(min(pods, 1))}, Get: getCost{CPUms: 1, Bytes: int64(pods) * 1000}}
	}
	runs := []scaleRun{
		run(0, 1, 20, 0.10, 0, 0), run(50, 1, 22, 0.12, 2, 1),
		run(0, 2, 21, 0.20, 0, 0), run(50, 2, 24, 0.10, 4, 1),
	}
	md := scaleMarkdown(&result.Run{}, true, time.Second, time.Second, runs, []string{"scale set 3/3 | x"}, []string{"scale-memory.svg"})
	for _, want := range []string{
		"| 0 | 2 | 0.0 | 0.00 | 0 | 20.5 (20.0–21.0) |",
		"| 50 | 2 | 3.0 (2.0–4.0) | 1.50 (1.00–2.00) | 1 | 23.0 (22.0–24.0) |",
		"| 0.38 (0.25–0.50) | 0.38 (0.25–0.50) |", // delete/start, time and CPU
		"| 50 | 2 | 0.110 (0.100–0.120) |",
		// CPU per pod, user and system: start 1 s and 2 s of CPU, half
		// of it system; delete 0.5 s, half of it system.
		"| 50 | 2 | 15.000 (10.000–20.000) | 15.000 (10.000–20.000) | 5.000 | 5.000 |",
		"![scale-memory](scale-memory.svg)",
		`scale set 3/3 \| x`,
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(md, "NaN") {
		t.Errorf("report shows NaN:\n%s", md)
	}
	// Every row of a table has as many cells as its header.
	cells := 0
	for _, line := range strings.Split(md, "\n") {
		if !strings.HasPrefix(line, "|") {
			cells = 0
			continue
		}
		n := strings.Count(strings.ReplaceAll(line, `\|`, ""), "|")
		if cells == 0 {
			cells = n
		} else if n != cells {
			t.Errorf("row has %d separators, its header %d: %s", n, cells, line)
		}
	}
	if !strings.Contains(md, "| 0 | 2 | 0.0 |") || !strings.Contains(md, "| – | – |\n| 50 |") {
		t.Errorf("the N=0 row's ratios are not dashes:\n%s", md)
	}

	pts := curvePoints(runs, func(r scaleRun) float64 { return r.RSSMiB })
	if len(pts.XYs) != 2 || pts.XYs[1].X != 50 || pts.XYs[1].Y != 23 || pts.YErrors[1].Low != 1 || pts.YErrors[1].High != 1 {
		t.Errorf("curvePoints = %+v", pts)
	}
	dir := t.TempDir()
	files, err := writeScalePlots(dir, runs)
	if err != nil || len(files) != len(scalePlots) {
		t.Fatalf("writeScalePlots = %v, %v", files, err)
	}
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil || !strings.Contains(string(b), "<svg") {
			t.Errorf("%s: not an SVG (%v)", f, err)
		}
	}
	if !math.IsNaN(ratioOf(1, 0)) {
		t.Error("ratioOf(1, 0) is a number")
	}
}
