package report

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/podline/podline/bench/internal/result"
)

// Markdown renders the run as a summary for people: the setting, then one
// table per scenario, the ratios and the warnings. Sections with no rows
// are left out. r is not modified.
func Markdown(r *result.Run) string {
	if r == nil {
		r = &result.Run{}
	}
	var b strings.Builder
	writeHeader(&b, r)
	writeDensity(&b, r.Density)
	writeStages(&b, r.Density)
	writeIdle(&b, r.Idle)
	writeChurn(&b, r.Churn)
	writeRatios(&b, r.Ratios)
	writeWarnings(&b, r.Warnings)
	return b.String()
}

func writeHeader(b *strings.Builder, r *result.Run) {
	b.WriteString("# podline bench suite\n\n")
	started := "unknown"
	if !r.Started.IsZero() {
		started = r.Started.UTC().Format("2006-01-02 15:04:05 UTC")
	}
	fmt.Fprintf(b, "- started: %s, took %s s\n", started, num(r.Seconds))
	if r.Quick {
		b.WriteString("- quick run: small pod counts, one pass of each scenario\n")
	} else {
		b.WriteString("- full run\n")
	}
	m := r.Machine
	fmt.Fprintf(b, "- machine: %s, %d CPUs, %d MiB, kernel %s, cgroup %s\n",
		orUnknown(m.Hostname), m.CPUs, m.MemoryMiB, orUnknown(m.Kernel), orUnknown(m.CgroupMode))
	fmt.Fprintf(b, "- podline: %s\n", orUnknown(r.Podline))
	if r.Kubelet != "" {
		fmt.Fprintf(b, "- kubelet: %s\n", r.Kubelet)
	} else {
		b.WriteString("- kubelet: not run\n")
	}
	if len(r.Latency) > 0 {
		var parts []string
		for _, method := range slices.Sorted(maps.Keys(r.Latency)) {
			parts = append(parts, method+" "+num(r.Latency[method])+" ms")
		}
		fmt.Fprintf(b, "- fake CRI latency (%s runs): %s\n", result.RuntimeFakeContainerd, strings.Join(parts, ", "))
	}
	if n := len(r.Warnings); n > 0 {
		fmt.Fprintf(b, "- warnings: %d, listed at the end\n", n)
	}
	b.WriteString("\n")
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

func writeDensity(b *strings.Builder, rows []result.Density) {
	t := table{
		head: []string{"agent", "mode", "runtime", "pods", "all Running s", "pods/s",
			"p50 ms", "p90 ms", "p99 ms", "CPU s", "kernel CPU s", "poll CPU s", "CPU ms/pod", "peak RSS MiB",
			"RSS/pod KiB", "threads", "runtime CPU s"},
		text: 3,
	}
	for _, d := range sortedByKey(rows, densityKey) {
		t.add(d.Agent, d.Mode, d.Runtime, strconv.Itoa(d.Pods),
			num(d.AllRunningSec), num(d.PodsPerSec),
			num(d.Startup.P50), num(d.Startup.P90), num(d.Startup.P99),
			num(d.CPUSec), num(d.KernelCPUSec), num(d.PollCPUSec), num(perPodMilli(d.CPUSec, d.Pods)), num(d.PeakRSSMiB),
			num(d.RSSPerPodKiB), strconv.Itoa(d.Threads), num(d.RuntimeCPUSec))
	}
	if len(t.rows) == 0 {
		return
	}
	b.WriteString("## Density\n\nN pods handed over at once; startup is manifest written → Running in /pods. " +
		"CPU s is the agent's from the first manifest to the last pod Running; kernel CPU s is its system-time part, " +
		"poll CPU s an estimate of what serving the observer's /pods polls cost (both included in CPU s).\n\n")
	t.write(b)
}

// writeStages shows the stage split only for the largest pod count of each
// podline configuration: smaller counts add rows, not insight.
func writeStages(b *strings.Builder, rows []result.Density) {
	largest := map[series]result.Density{}
	for _, d := range rows {
		if len(d.Stages) == 0 {
			continue
		}
		s := seriesOf(d.Key)
		if cur, ok := largest[s]; !ok || d.Pods > cur.Pods {
			largest[s] = d
		}
	}
	if len(largest) == 0 {
		return
	}
	b.WriteString("## Stages\n\nPer-stage split of pod starts at the largest pod count of each configuration, " +
		"from podline's histograms (quantiles are bucket bounds). CRI times are per call.\n\n")
	for _, s := range slices.SortedFunc(maps.Keys(largest), cmpSeries) {
		d := largest[s]
		fmt.Fprintf(b, "### %s, %d pods\n\n", s, d.Pods)
		t := table{
			head: []string{"stage", "passes", "queue p50 ms", "queue p99 ms", "work p50 ms",
				"work p99 ms", "CRI calls", "CRI p50 ms", "CRI p99 ms"},
			text: 1,
		}
		// Stages keep the pipeline's order, which is the order of a pod's life.
		for _, st := range d.Stages {
			t.add(st.Name, strconv.Itoa(st.Passes), num(st.QueueWait.P50), num(st.QueueWait.P99),
				num(st.Work.P50), num(st.Work.P99), strconv.Itoa(st.CRICall),
				num(st.CRI.P50), num(st.CRI.P99))
		}
		t.write(b)
	}
}
