package report

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/podline/podline/bench/internal/result"
)

// section returns the Markdown between the heading and the next "## ".
func section(md, heading string) string {
	i := strings.Index(md, "## "+heading+"\n")
	if i < 0 {
		return ""
	}
	rest := md[i+len(heading)+4:]
	if j := strings.Index(rest, "\n## "); j >= 0 {
		rest = rest[:j]
	}
	return rest
}

// rowPrefixes lists the first n cells of each body row of the tables in s.
func rowPrefixes(s string, n int) []string {
	var out []string
	for _, line := range strings.Split(s, "\n") {
		if !strings.HasPrefix(line, "| ") || strings.HasPrefix(line, "| agent") || strings.HasPrefix(line, "| stage") ||
			strings.HasPrefix(line, "| name") || strings.HasPrefix(line, "| ---") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "| "), " | ")
		out = append(out, strings.Join(cells[:n], " "))
	}
	return out
}

func TestMarkdownDensity(t *testing.T) {
	md := Markdown(fixture())
	d := section(md, "Density")
	want := "| podline | default | fake-containerd | 1000 | 12.3 | 81 | 45.7 | 120 | 988 | 4.5 | 1.25 | 0.5 | 4.5 | 61.3 | 23.5 | 12 | 0.0123 |"
	if !strings.Contains(d, want+"\n") {
		t.Fatalf("density row missing:\nwant %s\nin\n%s", want, d)
	}
	order := []string{
		"podline default fake-containerd 100",
		"podline default fake-containerd 1000",
		"podline queue=channel fake-containerd 100",
		"podline queue=channel fake-containerd 1000",
		"kubelet default fake-containerd 100",
		"kubelet default fake-containerd 1000",
	}
	if got := rowPrefixes(d, 4); !slices.Equal(got, order) {
		t.Fatalf("density rows:\n%q\nwant\n%q", got, order)
	}
}

func TestMarkdownStagesOnlyLargestPodCount(t *testing.T) {
	s := section(Markdown(fixture()), "Stages")
	for _, h := range []string{"### podline, default, fake-containerd, 1000 pods", "### podline, queue=channel, fake-containerd, 1000 pods"} {
		if !strings.Contains(s, h+"\n") {
			t.Errorf("stages: missing heading %q in\n%s", h, s)
		}
	}
	if strings.Contains(s, ", 100 pods") || strings.Contains(s, "kubelet") {
		t.Errorf("stages: want only podline at its largest count, got\n%s", s)
	}
	row := "| run-sandbox | 1000 | 0.5 | 12 | 80 | 150 | 1000 | 77 | 140 |"
	if strings.Count(s, row) != 2 {
		t.Errorf("stages: want row %q once per configuration in\n%s", row, s)
	}
	if i, j := strings.Index(s, "| run-sandbox"), strings.Index(s, "| start-containers"); i < 0 || j < i {
		t.Errorf("stages: pipeline order lost in\n%s", s)
	}
}

func TestMarkdownOtherSections(t *testing.T) {
	md := Markdown(fixture())
	for _, line := range []string{
		"- quick run: small pod counts, one pass of each scenario",
		"- started: 2026-11-21 14:03:00 UTC, took 1155 s",
		"- machine: bench-1, 2 CPUs, 3936 MiB, kernel 6.8.0, cgroup v2",
		"- kubelet: v1.36.3",
		"- fake CRI latency (fake-containerd runs): CreateContainer 35 ms, RunPodSandbox 77 ms",
		"- warnings: 1, listed at the end",
	} {
		if !strings.Contains(md, line+"\n") {
			t.Errorf("header: missing %q", line)
		}
	}
	idle := "| kubelet | default | fake-containerd | 1000 | 60 | 12.5 | 900 | 300 | 1 |"
	if !strings.Contains(section(md, "Idle"), idle) {
		t.Errorf("idle: missing %q in\n%s", idle, section(md, "Idle"))
	}
	churn := section(md, "Churn")
	var starts []string
	for _, line := range strings.Split(churn, "\n") {
		if cells := strings.Split(line, " | "); strings.HasPrefix(line, "| podline") {
			starts = append(starts, cells[5])
		}
	}
	if want := []string{"0", "10", "20"}; !slices.Equal(starts, want) {
		t.Errorf("churn windows from %q, want %q", starts, want)
	}
	ratios := section(md, "Ratios")
	for _, row := range []string{
		"| podline / kubelet, 1000 pods | allRunningSec | podline, default, fake-containerd, 1000 pods | " +
			"kubelet, default, fake-containerd, 1000 pods | 12.3 | 100 | ×0.123 |",
		"| cpuSec |",
		"| 6.6 | 4.5 | ×1.47 |",
	} {
		if !strings.Contains(ratios, row) {
			t.Errorf("ratios: missing %q in\n%s", row, ratios)
		}
	}
	if w := section(md, "Warnings"); !strings.Contains(w, "- real: containerd socket missing, scenario skipped\n") {
		t.Errorf("warnings: got\n%s", w)
	}
}

func TestMarkdownLeavesOutEmptySections(t *testing.T) {
	r := &result.Run{Density: []result.Density{{Key: key(result.AgentPodline, result.ModeDefault, result.RuntimeFakeZero, 10),
		AllRunningSec: 0.2, PodsPerSec: 50}}}
	md := Markdown(r)
	if !strings.Contains(md, "- kubelet: not run\n") || !strings.Contains(md, "- started: unknown") {
		t.Errorf("header for a bare run:\n%s", md)
	}
	for _, h := range []string{"## Stages", "## Idle", "## Churn", "## Ratios", "## Warnings", "- warnings:", "fake CRI latency"} {
		if strings.Contains(md, h) {
			t.Errorf("empty section %q rendered:\n%s", h, md)
		}
	}
	if got := rowPrefixes(section(md, "Density"), 4); !slices.Equal(got, []string{"podline default fake-zero 10"}) {
		t.Errorf("density rows %q", got)
	}
	if md := Markdown(nil); !strings.HasPrefix(md, "# podline bench suite") || strings.Contains(md, "## ") {
		t.Errorf("Markdown(nil) = %q", md)
	}
}

func TestMarkdownKeepsRunUnchanged(t *testing.T) {
	r, want := fixture(), fixture()
	Markdown(r)
	if !reflect.DeepEqual(r, want) {
		t.Fatal("Markdown changed the run it was given")
	}
}
