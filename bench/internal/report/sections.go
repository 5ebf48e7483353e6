package report

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/podline/podline/bench/internal/result"
)

func writeIdle(b *strings.Builder, rows []result.Idle) {
	t := table{
		head: []string{"agent", "mode", "runtime", "pods", "window s", "CPU %",
			"wakeups/s", "RSS MiB", "runtime CPU %"},
		text: 3,
	}
	for _, i := range sortedByKey(rows, idleKey) {
		t.add(i.Agent, i.Mode, i.Runtime, strconv.Itoa(i.Pods), num(i.WindowSec),
			num(i.CPUPercent), num(i.WakeupsPerSec), num(i.RSSMiB), num(i.RuntimeCPUPercent))
	}
	if len(t.rows) == 0 {
		return
	}
	b.WriteString("## Idle\n\nN pods Running and nothing changing; CPU % is of one core.\n\n")
	t.write(b)
}

// writeChurn gives each window its own row so that a drift over time
// shows as a column that does not stay flat.
func writeChurn(b *strings.Builder, runs []result.Churn) {
	t := table{
		head: []string{"agent", "mode", "runtime", "pods", "replaced/s", "from s",
			"started", "p50 ms", "p90 ms", "p99 ms", "CPU %", "RSS MiB"},
		text: 3,
	}
	for _, c := range sortedByKey(runs, churnKey) {
		windows := slices.Clone(c.Windows)
		slices.SortStableFunc(windows, func(x, y result.ChurnWindow) int {
			return cmp.Compare(x.StartSec, y.StartSec)
		})
		for _, w := range windows {
			t.add(c.Agent, c.Mode, c.Runtime, strconv.Itoa(c.Pods), num(c.RatePerSec),
				num(w.StartSec), strconv.Itoa(w.Started), num(w.Startup.P50),
				num(w.Startup.P90), num(w.Startup.P99), num(w.CPUPercent), num(w.RSSMiB))
		}
	}
	if len(t.rows) == 0 {
		return
	}
	b.WriteString("## Churn\n\nPods deleted and added at a steady rate while N stay; one row per window.\n\n")
	t.write(b)
}

// writeRatios keeps the runner's order: it groups the ratios by question
// (against the kubelet, each ablation), which sorting would scatter.
func writeRatios(b *strings.Builder, ratios []result.Ratio) {
	t := table{
		head: []string{"name", "metric", "A", "B", "A value", "B value", "A / B"},
		text: 4,
	}
	for _, r := range ratios {
		t.add(r.Name, r.Metric, keyLabel(r.A), keyLabel(r.B), num(r.AValue), num(r.BValue), ratio(r.Value))
	}
	if len(t.rows) == 0 {
		return
	}
	b.WriteString("## Ratios\n\nA value / B value; for times, CPU and RSS below ×1 means A needs less than B.\n\n")
	t.write(b)
}

func writeWarnings(b *strings.Builder, warnings []string) {
	if len(warnings) == 0 {
		return
	}
	b.WriteString("## Warnings\n\n")
	for _, w := range warnings {
		fmt.Fprintf(b, "- %s\n", strings.Join(strings.Fields(w), " "))
	}
	b.WriteString("\n")
}
