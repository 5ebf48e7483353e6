package main

import (
	"strings"
	"testing"
	"time"
)

// Lines as containerd 2 and podline write them, for one pod added and one
// removed during the outage, with other pods' and other callers' lines
// between.
const (
	sbOld  = "aaaa000000000000000000000000000000000000000000000000000000000001"
	ctrOld = "cccc000000000000000000000000000000000000000000000000000000000001"
	sbNew  = "bbbb000000000000000000000000000000000000000000000000000000000002"
	ctrNew = "dddd000000000000000000000000000000000000000000000000000000000002"

	ctrdLog = `time="2026-11-27T10:00:09.000000000Z" level=info msg="starting containerd" revision= version=v2.4.2
time="2026-11-27T10:00:09.800000000Z" level=info msg="containerd successfully booted in 0.800000s"
time="2026-11-27T10:00:12.100000000Z" level=info msg="StopContainer for \"` + ctrOld + `\" with timeout 1 (s)"
time="2026-11-27T10:00:12.200000000Z" level=info msg="RunPodSandbox for name:\"bench-00100-bench\"  uid:\"u1\"  namespace:\"default\""
time="2026-11-27T10:00:12.300000000Z" level=info msg="RunPodSandbox for name:\"victim-e2e\"  uid:\"u9\"  namespace:\"default\""
time="2026-11-27T10:00:13.000000000Z" level=info msg="StopContainer for \"` + ctrOld + `\" returns successfully"
time="2026-11-27T10:00:13.400000000Z" level=info msg="RunPodSandbox for name:\"bench-00100-bench\"  uid:\"u1\"  namespace:\"default\" returns sandbox id \"` + sbNew + `\""
time="2026-11-27T10:00:13.500000000Z" level=info msg="CreateContainer within sandbox \"` + sbNew + `\" for container name:\"app\""
time="2026-11-27T10:00:13.600000000Z" level=info msg="CreateContainer within sandbox \"` + sbNew + `\" for name:\"app\" returns container id \"` + ctrNew + `\""
time="2026-11-27T10:00:13.610000000Z" level=info msg="StartContainer for \"` + ctrNew + `\""
time="2026-11-27T10:00:13.700000000Z" level=info msg="StopPodSandbox for \"` + sbOld + `\""
time="2026-11-27T10:00:14.000000000Z" level=info msg="StartContainer for \"` + ctrNew + `\" returns successfully"
time="2026-11-27T10:00:14.100000000Z" level=info msg="StopPodSandbox for \"` + sbOld + `\" returns successfully"
time="2026-11-27T10:00:14.150000000Z" level=info msg="RemovePodSandbox for \"` + sbOld + `\""
time="2026-11-27T10:00:14.300000000Z" level=info msg="RemovePodSandbox \"` + sbOld + `\" returns successfully"
time="2026-11-27T10:00:15.000000000Z" level=info msg="RunPodSandbox for name:\"bench-00100-bench\"  uid:\"u1\"  namespace:\"default\""
`
	podlineLog = `time=2026-11-27T09:59:00.000Z level=INFO msg="pod running" pod=default/bench-00100-bench uid=old took=1s
time=2026-11-27T10:00:02.000Z level=WARN msg="pod sync failed" pod=default/bench-00000-bench uid=u0 err="sandbox: StopContainer: unavailable" retry_in=4s
time=2026-11-27T10:00:03.000Z level=WARN msg="pod sync failed" pod=default/bench-00100-bench uid=u1 err="sandbox: RunPodSandbox: unavailable" retry_in=2s
time=2026-11-27T10:00:07.000Z level=WARN msg="pod sync failed" pod=default/bench-00100-bench uid=u1 err="sandbox: RunPodSandbox: unavailable" retry_in=8s
time=2026-11-27T10:00:10.500Z level=WARN msg="pod sync failed" pod=default/bench-00100-bench uid=u1 err="sandbox: RunPodSandbox: unavailable" retry_in=16s
time=2026-11-27T10:00:11.900Z level=INFO msg="container event stream reconnected" down=10.5s
time=2026-11-27T10:00:14.200Z level=INFO msg="pod running" pod=default/bench-00100-bench uid=u1 took=13.2s
time=2026-11-27T10:00:16.000Z level=WARN msg="pod sync failed" pod=default/bench-00100-bench uid=u1 err="status: x" retry_in=1s
`
)

func TestPodTimeline(t *testing.T) {
	at := func(s string) time.Time {
		t.Helper()
		x, err := time.Parse(time.RFC3339Nano, "2026-11-27T"+s+"Z")
		if err != nil {
			t.Fatal(err)
		}
		return x
	}
	down, up := at("10:00:01"), at("10:00:10")
	tl := newPodTimeline(map[string]string{sbOld: "bench-00000-bench", ctrOld: "bench-00000-bench"})
	if err := tl.readContainerd(strings.NewReader(ctrdLog)); err != nil {
		t.Fatal(err)
	}
	if err := tl.readPodline(strings.NewReader(podlineLog), down, up); err != nil {
		t.Fatal(err)
	}
	f := func(pod, step, want string) {
		t.Helper()
		got, ok := tl.at(pod, step)
		switch {
		case want == "" && ok:
			t.Fatalf("%s %s at %s, want never", pod, step, got.Format(time.StampMilli))
		case want != "" && !ok:
			t.Fatalf("%s %s: never, want %s", pod, step, want)
		case want != "" && !got.Equal(at(want)):
			t.Fatalf("%s %s at %s, want %s", pod, step, got.Format(time.StampMilli), want)
		}
	}
	added, removed := "bench-00100-bench", "bench-00000-bench"
	// The first call counts, not the later retry; the sandbox's id leads
	// to its container through CreateContainer.
	f(added, stepRunSandbox, "10:00:12.2")
	f(added, stepSandboxUp, "10:00:13.4")
	f(added, stepStarted, "10:00:14")
	// Before down is the run's start, not its recovery.
	f(added, stepRunning, "10:00:14.2")
	// The last failure before the first call: 10.5 s + 16 s.
	f(added, stepRetryDue, "10:00:26.5")
	f(removed, stepRetryDue, "10:00:06")
	f(removed, stepStopCalled, "10:00:12.1")
	f(removed, stepStopDone, "10:00:13")
	f(removed, stepStopped, "10:00:14.1")
	f(removed, stepRemoved, "10:00:14.3")
	f("victim-e2e", stepSandboxUp, "")
	if !tl.reconnect.Equal(at("10:00:11.9")) {
		t.Fatalf("reconnect at %s", tl.reconnect)
	}
	// Failures after up: the one at 10.5 s and the one after the start.
	if tl.failures[added] != 2 || tl.failures[removed] != 0 {
		t.Fatalf("failures after up %v, want 2 for the added pod, 0 for the removed", tl.failures)
	}

	// The suite's looks: the last time a pod turned as wanted.
	looks := newConvLooks([]string{added}, []string{removed})
	looks.look(at("10:00:12"), []violation{{invLost, added, ""}, {invOrphan, removed, ""}})
	looks.look(at("10:00:14.5"), nil)
	looks.look(at("10:00:14.6"), []violation{{invLost, added, ""}})
	looks.look(at("10:00:14.8"), nil)
	for pod, want := range map[string]string{added: "10:00:14.8", removed: "10:00:14.5"} {
		if !looks[pod].Equal(at(want)) {
			t.Fatalf("%s as wanted from %s, want %s", pod, looks[pod], want)
		}
	}
	tl.saw(added, stepConverged, looks[added])

	b := tl.breakdown(up, []string{added, "bench-00101-bench"}, []string{removed})
	if b.ReconnectSec == nil || *b.ReconnectSec < 1.89 || *b.ReconnectSec > 1.91 {
		t.Fatalf("reconnect %v s after up, want 1.9", b.ReconnectSec)
	}
	// containerd's log dates its boot before the suite's check.
	if b.BootedSec == nil || *b.BootedSec < -0.21 || *b.BootedSec > -0.19 {
		t.Fatalf("booted %v s after up, want -0.2", b.BootedSec)
	}
	run := b.Added[1] // stepRunSandbox
	if run.Step != stepRunSandbox || run.Pods != 1 || run.Of != 2 || run.Slowest != added || run.MaxSec < 2.19 || run.MaxSec > 2.21 {
		t.Fatalf("RunPodSandbox step %+v", run)
	}
	if b.FailuresAfterUp != 2 || b.FailuresMaxPod != 2 {
		t.Fatalf("failures %d / %d, want 2 / 2", b.FailuresAfterUp, b.FailuresMaxPod)
	}
}

func TestConvStepMedian(t *testing.T) {
	up := time.Unix(100, 0)
	tl := newPodTimeline(nil)
	for i, d := range []float64{3, 1, 2, 7} {
		tl.saw(string(rune('a'+i)), stepStarted, up.Add(time.Duration(d*float64(time.Second))))
	}
	s := tl.step(stepStarted, []string{"a", "b", "c", "d"}, up)
	if s.MedianSec != 2.5 || s.MaxSec != 7 || s.Slowest != "d" || s.Pods != 4 {
		t.Fatalf("step %+v, want median 2.5, slowest d at 7", s)
	}
}

func TestBreakdownMarkdown(t *testing.T) {
	step := func(s string, med, hi float64, n int) convStep {
		return convStep{Step: s, Pods: n, Of: 10, MedianSec: med, MaxSec: hi}
	}
	bd := func(reconnect *float64, start float64) *convBreakdown {
		return &convBreakdown{ReconnectSec: reconnect, BootedSec: reconnect,
			Added:   []convStep{step(stepRunSandbox, start, start+1, 10), step(stepStarted, start+2, start+3, 9)},
			Removed: []convStep{step(stepRemoved, 3, 4, 10)}, FailuresAfterUp: 20, FailuresMaxPod: 2}
	}
	early := -0.32
	md := breakdownMarkdown([]relRun{
		{Run: 1, ConvergeSec: 9.3, Breakdown: bd(&early, 4.5)}, // before the suite's own check
		{Run: 2, ConvergeSec: 15.1},                            // no breakdown: left out
		{Run: 3, ConvergeSec: 14.9, Breakdown: bd(nil, 10.5)},
	})
	for _, want := range []string{
		"| step | run 1 | run 3 | median of the runs |",
		"| **convergence** (suite: every invariant holds) | **9.30** | **14.90** | 12.10 (9.30–14.90) |",
		"| " + stepReconnect + " | -0.32 | – | -0.32 |",
		"| containerd: booted (its log) | -0.32 | – | -0.32 |",
		"| *the 10 pods added during the outage* | | | |",
		"| " + stepRunSandbox + " | 4.50 / 5.50 | 10.50 / 11.50 | 7.50 (4.50–10.50) |",
		"| " + stepStarted + " | 6.50 / 7.50 (9/10) | 12.50 / 13.50 (9/10) |",
		"| 20 / 2 | 20 / 2 |",
	} {
		if !strings.Contains(md, want) {
			t.Fatalf("breakdown lacks %q:\n%s", want, md)
		}
	}
	if breakdownMarkdown([]relRun{{Run: 1}}) != "" {
		t.Fatal("a case without breakdowns has a breakdown table")
	}
}
