package main

import (
	"strconv"
	"strings"
	"testing"

	"github.com/podline/podline/bench/internal/result"
)

func TestQueuePlanAlternatesModes(t *testing.T) {
	cfg, err := parseFlags([]string{"-scenarios", "queue", "-queue-runs", "2", "-queue-cases", "fake-zero:10000,fake-containerd:100"})
	if err != nil {
		t.Fatal(err)
	}
	cases, err := queuePlan(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range cases {
		got = append(got, c.runtime+"/"+itoa(c.pods)+"/"+queueName(c.mode)+"/"+itoa(c.run))
	}
	want := "fake-zero/10000/lock-free/1 fake-zero/10000/channel/1 fake-zero/10000/lock-free/2 fake-zero/10000/channel/2 " +
		"fake-containerd/100/lock-free/1 fake-containerd/100/channel/1 fake-containerd/100/lock-free/2 fake-containerd/100/channel/2"
	if s := strings.Join(got, " "); s != want {
		t.Errorf("plan:\n got %s\nwant %s", s, want)
	}
}

func TestQueuePlanDefaults(t *testing.T) {
	cfg, err := parseFlags([]string{"-scenarios", "queue"})
	if err != nil {
		t.Fatal(err)
	}
	cases, err := queuePlan(cfg)
	if err != nil {
		t.Fatal(err)
	}
	// 2 runtimes × 3 pod counts × 5 runs × 2 modes.
	if len(cases) != 60 {
		t.Errorf("%d runs, want 60", len(cases))
	}
	if cases[0].mode != result.ModeDefault || cases[1].mode != result.ModeQueueChannel {
		t.Errorf("first pair %s, %s: want the lock-free queue first", cases[0].mode, cases[1].mode)
	}
	if cfg2, _ := parseFlags(nil); cfg2.scenarios["queue"] {
		t.Error("queue runs by default; it must be opt-in")
	}
	if _, err := parseFlags([]string{"-scenarios", "queue", "-queue-runtimes", "containerd"}); err == nil {
		t.Error("-queue-runtimes containerd accepted: the scenario runs the fake CRI only")
	}
}

func TestQueueFromMetrics(t *testing.T) {
	m, err := parseMetrics(strings.NewReader(`podline_stage_queue_wait_seconds_bucket{stage="sandbox",vmrange="1.000e-03...1.136e-03"} 4
podline_stage_queue_wait_seconds_sum{stage="sandbox"} 0.5
podline_stage_queue_wait_seconds_count{stage="sandbox"} 4
podline_stage_duration_seconds_bucket{stage="sandbox",vmrange="1.000e-03...1.136e-03"} 4
podline_stage_duration_seconds_sum{stage="sandbox"} 2
podline_stage_duration_seconds_count{stage="sandbox"} 4
podline_pipeline_queue_waits_total 3
podline_pod_start_duration_seconds_sum 8
podline_pod_start_duration_seconds_count 4
`))
	if err != nil {
		t.Fatal(err)
	}
	r := queueRun{Pods: 4, StartSec: 1}
	r.fromMetrics(m)
	sb := r.stage("sandbox")
	if sb.Passes != 4 || sb.WaitSumSec != 0.5 || sb.WorkSumSec != 2 || sb.Workers != 64 {
		t.Errorf("sandbox %+v", sb)
	}
	if r.QueueWaits != 3 || r.PodStartMeanMs != 2000 {
		t.Errorf("parked %g, pod start mean %g ms", r.QueueWaits, r.PodStartMeanMs)
	}
	if w := r.waitPerPodMs(); w != 125 {
		t.Errorf("queue wait per pod %g ms, want 125", w)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
