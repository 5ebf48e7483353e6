package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// percentile is the nearest-rank p-th percentile of xs (p in (0, 100]).
func percentile(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	i := int(math.Ceil(p/100*float64(len(s)))) - 1
	return s[max(0, min(i, len(s)-1))]
}

// writeResults writes the JSON and, next to it, the Markdown report, and
// prints the report.
func writeResults(out string, r *results) error {
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return err
	}
	js, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(out, append(js, '\n'), 0o644); err != nil {
		return err
	}
	md := markdown(r)
	mdPath := strings.TrimSuffix(out, filepath.Ext(out)) + ".md"
	if err := os.WriteFile(mdPath, []byte(md), 0o644); err != nil {
		return err
	}
	fmt.Print("\n" + md)
	fmt.Printf("\nwritten: %s, %s\n", out, mdPath)
	return nil
}

// rerender rewrites the Markdown next to a results JSON from it, after a
// change of the report's format; nothing is measured.
func rerender(path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var r results
	if err := json.Unmarshal(b, &r); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	mdPath := strings.TrimSuffix(path, filepath.Ext(path)) + ".md"
	return os.WriteFile(mdPath, []byte(markdown(&r)), 0o644)
}

// markdown renders the side-by-side table, the relist/events ratios and
// the details behind each number.
func markdown(r *results) string {
	var w strings.Builder
	c := r.Config
	fmt.Fprintf(&w, "# podline event plane: --pleg=events vs --pleg=relist\n\n")
	fmt.Fprintf(&w, "%s, %s, %d cores, kernel %s; podline %s; %s. Run took %.0f s.\n\n",
		r.Started.Format("2006-01-02 15:04 MST"), r.Host, r.Cores, r.Kernel, r.Podline, r.Containerd, r.DurationS)
	fmt.Fprintf(&w, "    %s\n\n", r.Command)
	if r.Error != "" {
		fmt.Fprintf(&w, "**The run failed:** %s\n\n", r.Error)
	}

	cols := columns(c.IdlePods)
	head := []string{"mode"}
	for _, col := range cols {
		head = append(head, col.head)
	}
	row(&w, head)
	row(&w, slices.Repeat([]string{"---"}, len(head)))
	for _, m := range r.Modes {
		cells := []string{m.Mode}
		for _, col := range cols {
			cell := col.format(col.value(m))
			if col.fine != nil && !math.IsNaN(col.fine(m)) {
				cell += fmt.Sprintf(" (%.3f)", col.fine(m))
			}
			cells = append(cells, cell)
		}
		row(&w, cells)
	}
	if ev, rl := findMode(r, "events"), findMode(r, "relist"); ev != nil && rl != nil {
		cells := []string{"relist / events"}
		for _, col := range cols {
			pick := col.value
			if col.fine != nil {
				pick = col.fine
			}
			cells = append(cells, fmtRatio(pick(rl), pick(ev)))
		}
		row(&w, cells)
	}
	fmt.Fprintf(&w, "\nIn parentheses, and used for their ratio: podline CPU %% from the threads' schedstat run time "+
		"(nanoseconds), because an idle podline may stay below one 10 ms tick in the whole window.\n")

	fmt.Fprintf(&w, "\nExit latency: %d pods per mode (busybox `sleep 3600`, host network); the main process SIGKILLed, "+
		"one pod at a time, %.0f ms + uniform [0, %.1f s) after the previous pod's sandbox stopped; latency from right before "+
		"kill(2) to the headers of the first /pods response that shows the container terminated (polled back to back; "+
		"podline snapshots the pods before it writes the headers, so a sample is late by at most one poll's time to "+
		"headers; the lower bound is when the last poll that did not show it was sent). Percentiles are nearest-rank. "+
		"\"in podline\" is podline's own histogram podline_container_exit_to_status_seconds: from the exit as the kernel "+
		"(events) or the runtime (relist) timed it to the status showing it, no HTTP in between; values are bucket upper "+
		"bounds (buckets ~12 %% wide); it also counts the exits of the pods' startup and teardown.\n\n",
		c.ExitPods, c.KillGapMS, c.KillJitterS)
	fmt.Fprintf(&w, "Idle: N pods Running under a fresh podline, %.0f s settle, then a %.0f s window; CPU is utime+stime "+
		"from /proc/<pid>/stat (10 ms ticks) in %% of one core; context switches are voluntary + involuntary summed "+
		"over the threads (a wake-up proxy). containerd is shared: its figure includes other users' pods.\n\n",
		c.SettleS, c.IdleWindowS)

	fmt.Fprintf(&w, "## Details\n\n")
	for _, m := range r.Modes {
		if e := m.Exit; e != nil {
			fmt.Fprintf(&w, "- exit/%s: %d pods Running in %.1f s; %d samples, %d timed out; mean poll time to headers "+
				"%.2f ms while waiting, %.2f ms right before a kill; lower bounds p50 %s, p99 %s; less the quiet poll "+
				"p50 %s, p99 %s; sandbox stopped p50 %s after the exit showed; %s\n",
				m.Mode, e.Pods, e.StartS, len(e.Samples), e.TimedOut, e.MeanPollMS, e.QuietMS,
				fmtMS(e.LowerP50MS), fmtMS(e.LowerP99MS), fmtMS(e.NetP50MS), fmtMS(e.NetP99MS),
				fmtMS(e.StopP50MS), fmtMetrics(e.Metrics))
		}
	}
	for _, m := range r.Modes {
		for _, i := range m.Idle {
			fmt.Fprintf(&w, "- idle%d/%s: Running in %.1f s; window %.1f s; schedstat CPU podline %.3f %%, containerd %.2f %%; "+
				"containerd %.0f ctx sw/s; podline %d threads; %d foreign sandboxes; loadavg %s → %s; %s\n",
				i.Pods, m.Mode, i.StartS, i.WindowS, i.PodlineSchedCPUPct, i.ContainerdSchedCPUPct,
				i.ContainerdCtxSwPerS, i.PodlineThreads, i.ForeignSandboxes, i.LoadAvgBefore, i.LoadAvgAfter, fmtMetrics(i.Metrics))
		}
	}
	return w.String()
}

// column is one column of the table: a number per mode, NaN when the
// run has none. fine, when set, is a finer measure of the same thing.
type column struct {
	head   string
	value  func(*modeResult) float64
	fine   func(*modeResult) float64
	format func(float64) string
}

func columns(idlePods []int) []column {
	exit := func(head string, pick func(*exitResult) float64) column {
		return column{head: head, format: fmtMS, value: func(m *modeResult) float64 {
			if m.Exit == nil {
				return math.NaN()
			}
			return pick(m.Exit)
		}}
	}
	cols := []column{
		exit("exit p50", func(e *exitResult) float64 { return e.P50MS }),
		exit("p90", func(e *exitResult) float64 { return e.P90MS }),
		exit("p99", func(e *exitResult) float64 { return e.P99MS }),
		exit("max", func(e *exitResult) float64 { return e.MaxMS }),
		exit("in podline p50", func(e *exitResult) float64 { return e.InPodlineP50MS }),
		exit("p99", func(e *exitResult) float64 { return e.InPodlineP99MS }),
	}
	idle := func(n int, pick func(*idleResult) float64) func(*modeResult) float64 {
		return func(m *modeResult) float64 {
			for _, i := range m.Idle {
				if i.Pods == n {
					return pick(i)
				}
			}
			return math.NaN()
		}
	}
	for _, what := range []struct {
		name   string
		value  func(*idleResult) float64
		fine   func(*idleResult) float64
		format func(float64) string
	}{
		{"podline CPU", func(i *idleResult) float64 { return i.PodlineCPUPct }, func(i *idleResult) float64 { return i.PodlineSchedCPUPct }, fmtPct},
		{"containerd CPU", func(i *idleResult) float64 { return i.ContainerdCPUPct }, nil, fmtPct},
		{"podline ctx sw/s", func(i *idleResult) float64 { return i.PodlineCtxSwPerS }, nil, fmtRate},
	} {
		for k, n := range idlePods {
			col := column{head: fmt.Sprintf("N=%d", n), value: idle(n, what.value), format: what.format}
			if k == 0 {
				col.head = fmt.Sprintf("%s N=%d", what.name, n)
			}
			if what.fine != nil {
				col.fine = idle(n, what.fine)
			}
			cols = append(cols, col)
		}
	}
	return cols
}

func findMode(r *results, mode string) *modeResult {
	for _, m := range r.Modes {
		if m.Mode == mode {
			return m
		}
	}
	return nil
}

func row(w *strings.Builder, cols []string) {
	fmt.Fprintf(w, "| %s |\n", strings.Join(cols, " | "))
}

func fmtMS(x float64) string {
	switch {
	case math.IsNaN(x):
		return "–"
	case x < 10:
		return fmt.Sprintf("%.2f ms", x)
	case x < 100:
		return fmt.Sprintf("%.1f ms", x)
	}
	return fmt.Sprintf("%.0f ms", x)
}

func fmtPct(x float64) string {
	if math.IsNaN(x) {
		return "–"
	}
	return fmt.Sprintf("%.2f %%", x)
}

func fmtRate(x float64) string {
	switch {
	case math.IsNaN(x):
		return "–"
	case x < 10:
		return fmt.Sprintf("%.1f", x)
	}
	return fmt.Sprintf("%.0f", x)
}

func fmtRatio(a, b float64) string {
	switch {
	case math.IsNaN(a) || math.IsNaN(b):
		return "–"
	case b == 0 && a == 0:
		return "1×"
	case b == 0:
		return "∞"
	case a/b >= 10:
		return fmt.Sprintf("%.0f×", a/b)
	}
	return fmt.Sprintf("%.2f×", a/b)
}

// fmtMetrics prints the event-plane counters that explain a result: what
// the sources delivered and what the relist found that they missed.
func fmtMetrics(m map[string]float64) string {
	keys := []string{
		"podline_pleg_relist_discrepancies_total",
		"podline_pleg_relist_pod_events_total",
		"podline_pleg_kernel_exits_total",
		"podline_pleg_cgroup_emptied_total",
		"podline_pleg_inspections_total",
		"podline_pleg_cri_events_stale_total",
		`podline_pleg_cri_events_received_total{type="stopped"}`,
		"podline_pleg_relist_duration_seconds_count",
	}
	var parts []string
	for _, k := range keys {
		if v, ok := m[k]; ok {
			name := strings.TrimPrefix(strings.Replace(k, "_total", "", 1), "podline_pleg_")
			parts = append(parts, fmt.Sprintf("%s %g", name, v))
		}
	}
	if len(parts) == 0 {
		return "no event-plane metrics"
	}
	return "metrics: " + strings.Join(parts, ", ")
}
