package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"syscall"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podline/podline/bench/internal/observe"
	"github.com/podline/podline/cri"
)

// exitTimeout bounds one wait for an exit to show; the relist alone
// needs at most about a second.
const exitTimeout = 10 * time.Second

type exitSample struct {
	Pod string `json:"pod"`
	PID int    `json:"pid"`
	// LatencyMS is from right before kill(2) to the arrival of the
	// response headers of the first /pods poll that shows the exit: an
	// upper bound, late by at most that poll's time to first byte.
	LatencyMS float64 `json:"latency_ms"`
	// LowerMS is when the last poll that did not show the exit was sent
	// (0 when the first poll showed it): the exit became visible after.
	LowerMS float64 `json:"lower_bound_ms"`
	// Polls of /pods until the exit showed, and their mean time to the
	// response headers.
	Polls      int     `json:"polls"`
	MeanPollMS float64 `json:"mean_poll_ms"`
	// QuietPollMS is one poll's time to headers right before the kill:
	// mostly podline encoding the pod list, which every sample includes.
	QuietPollMS float64 `json:"quiet_poll_ms"`
	// SandboxStopMS is from the exit showing in /pods until the runtime
	// reports the pod's sandbox stopped (podline stops it once the pod
	// has finished); the next kill waits for it.
	SandboxStopMS float64 `json:"sandbox_stop_ms"`
	TimedOut      bool    `json:"timed_out,omitempty"`
}

type exitResult struct {
	Pods       int          `json:"pods"`
	StartS     float64      `json:"all_running_s"`
	Samples    []exitSample `json:"samples"`
	P50MS      float64      `json:"p50_ms"`
	P90MS      float64      `json:"p90_ms"`
	P99MS      float64      `json:"p99_ms"`
	MaxMS      float64      `json:"max_ms"`
	LowerP50MS float64      `json:"lower_bound_p50_ms"`
	LowerP99MS float64      `json:"lower_bound_p99_ms"`
	// Latency less the quiet poll before it: an estimate of when podline
	// had the exit, not a bound.
	NetP50MS   float64            `json:"net_of_quiet_poll_p50_ms"`
	NetP99MS   float64            `json:"net_of_quiet_poll_p99_ms"`
	QuietMS    float64            `json:"mean_quiet_poll_ms"`
	StopP50MS  float64            `json:"sandbox_stop_p50_ms"`
	MeanPollMS float64            `json:"mean_poll_ms"`
	TimedOut   int                `json:"timed_out"`
	Metrics    map[string]float64 `json:"podline_metrics"`
	// InPodline* are podline's own exit-to-status histogram (see
	// histogram.go): exits it published, and the bucket bounds of p50/p99.
	InPodlineCount float64 `json:"in_podline_count"`
	InPodlineP50MS float64 `json:"in_podline_p50_ms"`
	InPodlineP99MS float64 `json:"in_podline_p99_ms"`
}

// exitLatency runs K pods under a fresh podline, then kills their main
// processes one at a time and times each exit until /pods shows it.
func (b *bench) exitLatency(ctx context.Context, mode string) (res *exitResult, err error) {
	label := "exit/" + mode
	a, err := b.startAgent(ctx, label, mode)
	if err != nil {
		return nil, err
	}
	defer func() {
		if terr := b.teardown(ctx, a); err == nil {
			err = terr
		}
	}()
	start := time.Now()
	names, err := a.writePods("exit-"+mode, b.cfg.exitPods)
	if err != nil {
		return nil, err
	}
	pods, err := a.waitRunning(ctx, names, b.saw)
	if err != nil {
		return nil, err
	}
	res = &exitResult{Pods: len(pods), StartS: time.Since(start).Seconds()}
	defer summarizeExits(res) // an interrupted run keeps what it measured
	time.Sleep(time.Second)   // let the last starts' follow-up work finish
	for i, p := range pods {
		// A random phase against podline's clocks (the relist period in
		// particular): kills right after a detection would always land
		// at the same point of the next relist period. The previous
		// pod's sandbox has stopped by now, so no teardown overlaps.
		wait := b.cfg.killGap
		if b.cfg.killJitter > 0 {
			wait += rand.N(b.cfg.killJitter)
		}
		select {
		case <-ctx.Done():
			return res, ctx.Err()
		case <-time.After(wait):
		}
		s, err := b.killAndWait(ctx, a, p)
		if err != nil {
			return res, err
		}
		shown := time.Now()
		if err := b.waitSandboxStopped(ctx, p.Metadata.UID); err != nil {
			return res, fmt.Errorf("%s: %w", label, err)
		}
		s.SandboxStopMS = ms(time.Since(shown))
		res.Samples = append(res.Samples, s)
		if s.TimedOut {
			progress("%s: %s: exit not shown within %s", label, s.Pod, exitTimeout)
		}
		if (i+1)%10 == 0 || i+1 == len(pods) {
			progress("%s: %d/%d exits timed, last %.2f ms", label, i+1, len(pods), s.LatencyMS)
		}
	}
	if res.Metrics, err = a.metrics(ctx); err != nil {
		return res, fmt.Errorf("%s: metrics: %w", label, err)
	}
	bs, err := a.histogram(ctx, exitHistogram)
	if err != nil {
		return res, fmt.Errorf("%s: metrics: %w", label, err)
	}
	for _, b := range bs {
		res.InPodlineCount += b.count
	}
	res.InPodlineP50MS, res.InPodlineP99MS = quantileMS(bs, 0.50), quantileMS(bs, 0.99)
	return res, nil
}

// killAndWait SIGKILLs the pod's main process and polls /pods until the
// container shows terminated. T0 is taken right before the kill, T1 when
// the headers of the showing response arrive.
func (b *bench) killAndWait(ctx context.Context, a *agent, p observe.Pod) (exitSample, error) {
	s := exitSample{Pod: p.Metadata.Name}
	id := strings.TrimPrefix(p.Status.ContainerStatuses[0].ContainerID, "containerd://")
	pid, err := mainPID(b.cfg.cgroupRoot, p.Metadata.UID, id)
	if err != nil {
		return s, fmt.Errorf("%s: %w", a.label, err)
	}
	s.PID = pid
	before := time.Now()
	_, at, err := a.poll(ctx)
	if err != nil {
		return s, err
	}
	s.QuietPollMS = ms(at.Sub(before))
	t0 := time.Now()
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		return s, fmt.Errorf("%s: kill %d: %w", a.label, pid, err)
	}
	var polling time.Duration
	for {
		sent := time.Now()
		pods, at, err := a.poll(ctx)
		if err != nil {
			return s, err
		}
		s.Polls++
		polling += at.Sub(sent)
		if shown(pods, p.Metadata.UID) {
			s.LatencyMS = ms(at.Sub(t0))
			break
		}
		s.LowerMS = ms(sent.Sub(t0))
		if at.Sub(t0) > exitTimeout {
			s.LatencyMS, s.TimedOut = ms(at.Sub(t0)), true
			break
		}
		if b.cfg.pollSleep > 0 {
			time.Sleep(b.cfg.pollSleep)
		}
	}
	s.MeanPollMS = ms(polling) / float64(s.Polls)
	return s, nil
}

// waitSandboxStopped waits until the runtime reports no ready sandbox of
// the pod: the finished pod's teardown must not overlap the next kill.
func (b *bench) waitSandboxStopped(ctx context.Context, uid string) error {
	filter := &runtimeapi.PodSandboxFilter{LabelSelector: map[string]string{cri.LabelPodUID: uid}}
	deadline := time.Now().Add(exitTimeout)
	for {
		sbs, err := b.rt.ListPodSandbox(ctx, filter)
		if err != nil {
			return err
		}
		ready := false
		for _, sb := range sbs {
			ready = ready || sb.State == runtimeapi.PodSandboxState_SANDBOX_READY
		}
		if !ready {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("pod %s: sandbox still ready %s after its exit showed", uid, exitTimeout)
		}
		if err := sleep(ctx, 10*time.Millisecond); err != nil {
			return err
		}
	}
}

func shown(pods []observe.Pod, uid string) bool {
	for i := range pods {
		if pods[i].Metadata.UID == uid {
			return pods[i].Terminated()
		}
	}
	return false
}

func summarizeExits(r *exitResult) {
	var lat, lower, net, stop []float64
	var poll, quiet float64
	for _, s := range r.Samples {
		lat = append(lat, s.LatencyMS)
		lower = append(lower, s.LowerMS)
		net = append(net, max(0, s.LatencyMS-s.QuietPollMS))
		quiet += s.QuietPollMS
		stop = append(stop, s.SandboxStopMS)
		poll += s.MeanPollMS
		if s.TimedOut {
			r.TimedOut++
		}
	}
	if len(lat) == 0 {
		return
	}
	r.P50MS = percentile(lat, 50)
	r.P90MS = percentile(lat, 90)
	r.P99MS = percentile(lat, 99)
	r.MaxMS = percentile(lat, 100)
	r.LowerP50MS = percentile(lower, 50)
	r.LowerP99MS = percentile(lower, 99)
	r.NetP50MS = percentile(net, 50)
	r.NetP99MS = percentile(net, 99)
	r.MeanPollMS = poll / float64(len(lat))
	r.QuietMS = quiet / float64(len(lat))
	r.StopP50MS = percentile(stop, 50)
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
