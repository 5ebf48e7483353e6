package main

import (
	"math"
	"strings"
	"testing"
)

func TestParseMetrics(t *testing.T) {
	text := `# HELP ignored
podline_stage_duration_seconds_bucket{stage="sandbox",vmrange="1.000e-02...1.136e-02"} 90
podline_stage_duration_seconds_bucket{stage="sandbox",vmrange="1.000e-01...1.136e-01"} 10
podline_stage_duration_seconds_sum{stage="sandbox"} 2.1
podline_stage_duration_seconds_count{stage="sandbox"} 100
podline_cri_request_duration_seconds_bucket{op="CreateContainer",vmrange="4.000e-02...4.500e-02"} 5
podline_cri_request_duration_seconds_bucket{op="StartContainer",vmrange="3.000e-02...3.400e-02"} 5
go_goroutines 42
`
	s, err := parseMetrics(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	if s.samples["go_goroutines"] != 42 {
		t.Fatalf("go_goroutines = %v", s.samples["go_goroutines"])
	}
	h := s.hist[`podline_stage_duration_seconds{stage="sandbox"}`]
	if h.count() != 100 {
		t.Fatalf("sandbox histogram count %v, want 100", h.count())
	}
	q := h.quantiles()
	if !near(q.P50, 11.36) || !near(q.P90, 11.36) || !near(q.P99, 113.6) {
		t.Fatalf("quantiles %+v", q)
	}
	st := stages(s)
	var containers, admit bool
	for _, x := range st {
		switch x.Name {
		case "containers":
			containers = true
			if x.CRICall != 10 || !near(x.CRI.P50, 34) || !near(x.CRI.P99, 45) {
				t.Errorf("containers stage CRI: %+v (%d calls)", x.CRI, x.CRICall)
			}
		case "admit":
			admit = true
			if x.Passes != 0 || x.Work.P50 != 0 {
				t.Errorf("admit without samples: %+v", x)
			}
		}
	}
	if !containers || !admit {
		t.Fatalf("stages missing: %+v", st)
	}
}

func TestQuantiles(t *testing.T) {
	var xs []float64
	for i := 1; i <= 100; i++ {
		xs = append(xs, float64(i))
	}
	q := quantiles(xs)
	if q.P50 != 50 || q.P90 != 90 || q.P99 != 99 || q.Max != 100 {
		t.Fatalf("quantiles = %+v", q)
	}
	if q := quantiles(nil); q.Max != 0 {
		t.Fatalf("empty = %+v", q)
	}
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
