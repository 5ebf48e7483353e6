package prober

import (
	"bytes"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/types"
)

// exposition is what /metrics/probes would serve, as lines.
func exposition() []string {
	var b bytes.Buffer
	Metrics.WritePrometheus(&b)
	return strings.Split(b.String(), "\n")
}

func seriesLine(lines []string, prefix string) (string, bool) {
	for _, l := range lines {
		if strings.HasPrefix(l, prefix) {
			return l, true
		}
	}
	return "", false
}

func TestMetricsAsTheKubelet(t *testing.T) {
	h := newHarness(t, 2)
	h.exec.set(exits(map[string]int32{"ready": 0}))
	pod := podWith("m1", nil, execProbe("ready"), nil)
	h.m.Sync(pod, "10.0.0.1", runningApp("c1", h.clock.Now()))
	h.settle()
	h.step(period)
	h.exec.set(exits(map[string]int32{"ready": 1}))
	h.step(period)

	lines := exposition()
	ok := `prober_probe_total{probe_type="Readiness",result="successful",container="app",pod="web-m1",namespace="default",pod_uid="m1"} 2`
	bad := `prober_probe_total{probe_type="Readiness",result="failed",container="app",pod="web-m1",namespace="default",pod_uid="m1"} 1`
	for _, want := range []string{ok, bad} {
		if _, found := seriesLine(lines, want); !found {
			t.Errorf("missing %s", want)
		}
	}
	if l, found := seriesLine(lines, `prober_probe_total{probe_type="Readiness",result="unknown",container="app",pod="web-m1"`); found {
		t.Errorf("a result never seen has a series: %s", l)
	}
	if _, found := seriesLine(lines, `prober_probe_duration_seconds_count{probe_type="Readiness",container="app",pod="web-m1",namespace="default"} 2`); !found {
		t.Error("no duration histogram counting the two successful runs")
	}
	// The kubelet's buckets: Prometheus' defaults, cumulative, with le.
	var les []string
	for _, l := range lines {
		if strings.HasPrefix(l, `prober_probe_duration_seconds_bucket{probe_type="Readiness",container="app",pod="web-m1",namespace="default",le="`) {
			le := strings.TrimPrefix(l, `prober_probe_duration_seconds_bucket{probe_type="Readiness",container="app",pod="web-m1",namespace="default",le="`)
			les = append(les, le[:strings.IndexByte(le, '"')])
		}
	}
	if got := strings.Join(les, " "); got != "0.005 0.01 0.025 0.05 0.1 0.25 0.5 1 2.5 5 10 +Inf" {
		t.Errorf("duration buckets %q, want the kubelet's", got)
	}

	h.m.Remove(types.UID("m1"))
	for _, l := range exposition() {
		if strings.Contains(l, `pod="web-m1"`) {
			t.Fatalf("series of a removed pod left: %s", l)
		}
	}
}

// The duration histogram does not name the pod UID: a pod deleted and
// made again under its name shares it until both are gone.
func TestSharedHistogramOutlivesOnePod(t *testing.T) {
	h := newHarness(t, 2)
	a := podWith("m2a", nil, execProbe("ready"), nil)
	b := podWith("m2b", nil, execProbe("ready"), nil)
	a.Name, b.Name = "same", "same"
	h.m.Sync(a, "10.0.0.1", runningApp("ca", h.clock.Now()))
	h.m.Sync(b, "10.0.0.2", runningApp("cb", h.clock.Now()))
	h.settle()
	const hist = `prober_probe_duration_seconds_count{probe_type="Readiness",container="app",pod="same",namespace="default"} 2`
	if _, found := seriesLine(exposition(), hist); !found {
		t.Fatal("no shared histogram with both runs")
	}
	h.m.Remove(types.UID("m2a"))
	if _, found := seriesLine(exposition(), `prober_probe_duration_seconds_count{probe_type="Readiness",container="app",pod="same"`); !found {
		t.Fatal("removing one pod took the other's histogram")
	}
	h.m.Remove(types.UID("m2b"))
	if l, found := seriesLine(exposition(), `prober_probe_duration_seconds`); found && strings.Contains(l, `pod="same"`) {
		t.Fatalf("histogram left after both pods: %s", l)
	}
}
