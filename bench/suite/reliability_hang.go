package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/podline/podline/bench/internal/observe"
	"github.com/podline/podline/cri"
)

const (
	// relRequestTimeout is podline's --runtime-request-timeout in the
	// hang case: short, so that the stuck call times out within the run.
	relRequestTimeout = 10 * time.Second
	// relHangWatch is how long the stuck pod is watched after the others
	// run: long enough for two timeouts and a retry.
	relHangWatch = 25 * time.Second
	// relSlowBy is what the slow runtime adds to every call.
	relSlowBy = time.Second
)

// relHang: N pods, one of whose RunPodSandbox never answers, on a podline
// whose runtime requests time out after relRequestTimeout.
func (s *suite) relHang(ctx context.Context, r *relRun, label string) error {
	hung := fmt.Sprintf("bench-%05d", r.Pods/2)
	hungPod := hung + "-" + nodeName
	r.Invariant = fmt.Sprintf("fakecri --hang RunPodSandbox=%s, podline --runtime-request-timeout %s: the other %d pods reach Running while %s is stuck; "+
		"the stuck pod is not Running and its status in /pods names the failed sandbox call", hungPod, relRequestTimeout, r.Pods-1, hungPod)
	env, err := s.relStart(ctx, label, []string{"--hang", "RunPodSandbox=" + hungPod}, "--runtime-request-timeout", relRequestTimeout.String())
	if err != nil {
		return err
	}
	defer env.close(label)
	start := time.Now()
	names, err := env.write(r.Pods)
	if err != nil {
		return err
	}
	others := slices.DeleteFunc(slices.Clone(names), func(n string) bool { return n == hungPod })
	wt := newWatcher(env.a, r.Pods)
	if err := wt.allRunning(ctx, label, others, 2*time.Minute); err != nil {
		return err
	}
	r.Figures = map[string]float64{"others_running_sec": time.Since(start).Seconds()}
	progress("%s: the other %d pods Running in %.1fs; watching %s for %s", label, len(others), r.Figures["others_running_sec"], hungPod, relHangWatch)
	if err := sleep(ctx, relHangWatch); err != nil {
		return err
	}
	pods, err := fullPods(ctx, env.a)
	if err != nil {
		return err
	}
	r.Observed = map[string]string{"healthz": healthz(ctx, env.healthzPort)}
	hungRunning, others0 := false, 0
	for i := range pods {
		p := &pods[i]
		switch {
		case p.Name == hungPod:
			r.Observed["status"] = podStatusText(p)
			hungRunning = podRunning(p)
		case podRunning(p):
			others0++
		}
	}
	if _, ok := r.Observed["status"]; !ok {
		r.Observed["status"] = "not listed in /pods"
	}
	hungCalls, err := fakeHung(ctx, env.control)
	if err != nil {
		return err
	}
	r.Figures["hung_calls"] = float64(hungCalls)
	r.Figures["watched_sec"] = time.Since(start).Seconds()
	r.Figures["others_running_at_end"] = float64(others0)
	r.Observed["log"] = strings.Join(logLinesWith(env.a.logPath, hung, 3), "\n")

	st := strings.ToLower(r.Observed["status"])
	named := strings.Contains(st, "sandbox") || strings.Contains(st, "deadline") || strings.Contains(st, "timeout") || strings.Contains(st, "timed out")
	switch {
	case hungCalls == 0:
		r.Verdict = "the fault was never reached: no call hung"
	case others0 != len(others):
		r.Verdict = fmt.Sprintf("only %d of the other %d pods still Running at the end", others0, len(others))
	case hungRunning:
		r.Verdict = "the stuck pod shows Running although its sandbox never came"
	case !named:
		r.Verdict = fmt.Sprintf("the other pods run, but the stuck pod's status gives no reason: %s", r.Observed["status"])
	default:
		r.Pass = true
		r.Verdict = fmt.Sprintf("%d others Running in %.1fs; the stuck pod's status names its failure; %d hung calls in %.0fs",
			len(others), r.Figures["others_running_sec"], hungCalls, r.Figures["watched_sec"])
	}
	return nil
}

// relSlow: N pods on a runtime where every call takes relSlowBy longer.
func (s *suite) relSlow(ctx context.Context, r *relRun, label string) error {
	r.Invariant = fmt.Sprintf("fakecri --slow %s (every call %s slower than containerd-like), podline defaults: every pod reaches Running, once", relSlowBy, relSlowBy)
	env, err := s.relStart(ctx, label, []string{"--slow", relSlowBy.String()})
	if err != nil {
		return err
	}
	defer env.close(label)
	start := time.Now()
	names, err := env.write(r.Pods)
	if err != nil {
		return err
	}
	if err := newWatcher(env.a, r.Pods).allRunning(ctx, label, names, 5*time.Minute); err != nil {
		return err
	}
	r.Figures = map[string]float64{"all_running_sec": time.Since(start).Seconds()}
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	snap, _, err := relLook(ctx, env.rt, env.a)
	if err != nil {
		return err
	}
	vs, left := checkInvariants(snap, want)
	r.Left, r.Violations = left, byInvariant(vs)
	r.Observed = map[string]string{"healthz": healthz(ctx, env.healthzPort)}
	for _, v := range vs[:min(len(vs), 10)] {
		r.ViolationSamples = append(r.ViolationSamples, v.String())
	}
	r.Pass = len(vs) == 0
	r.Verdict = fmt.Sprintf("all %d Running in %.1fs; %d violation(s) of the kill cases' invariants", r.Pods, r.Figures["all_running_sec"], len(vs))
	return nil
}

// relEnv is a fake CRI with fault flags and a podline with a healthz port.
type relEnv struct {
	dir, control string
	f            *fakeCRI
	rt           *cri.Client
	a            *podlineAgent
	healthzPort  int
	w            *podWriter
}

func (s *suite) relStart(ctx context.Context, label string, fakeArgs []string, podlineArgs ...string) (*relEnv, error) {
	dir, err := os.MkdirTemp(s.tmp, "rel-")
	if err != nil {
		return nil, err
	}
	e := &relEnv{dir: dir, control: filepath.Join(dir, "control.sock")}
	if e.f, err = startFakeCRI(ctx, s.fakecri, dir, relRuntime, append([]string{"--control", e.control}, fakeArgs...)...); err != nil {
		return nil, err
	}
	if e.rt, err = cri.Dial(ctx, "unix://"+e.f.socket, "", 30*time.Second); err != nil {
		e.close(label)
		return nil, err
	}
	if e.healthzPort, err = observe.FreePort(); err != nil {
		e.close(label)
		return nil, err
	}
	args := append([]string{"--healthz-port", strconv.Itoa(e.healthzPort)}, podlineArgs...)
	if e.a, err = startPodlineNode(ctx, s.podline, dir, "unix://"+e.f.socket, nodeName, 200, args...); err != nil {
		e.close(label)
		return nil, err
	}
	e.w = newPodWriter(e.a.manifests())
	if err := sleep(ctx, min(3*time.Second, s.settle())); err != nil {
		e.close(label)
		return nil, err
	}
	return e, nil
}

// write hands over n pods at once and returns their names in /pods.
func (e *relEnv) write(n int) ([]string, error) {
	names := make([]string, n)
	for i := range names {
		var err error
		if names[i], err = e.w.add(fmt.Sprintf("bench-%05d", i)); err != nil {
			return nil, fmt.Errorf("write manifest %d: %w", i, err)
		}
	}
	return names, nil
}

func (e *relEnv) close(label string) {
	if e.a != nil {
		release(e.a, label)
	}
	if e.rt != nil {
		e.rt.Close()
	}
	e.f.stop(5 * time.Second)
	os.RemoveAll(e.dir)
}

// fakeHung is the fake CRI's count of calls blocked by --hang.
func fakeHung(ctx context.Context, sock string) (int64, error) {
	c := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", sock)
	}}}
	defer c.CloseIdleConnections()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://fakecri/hung", nil)
	if err != nil {
		return 0, err
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0, fmt.Errorf("fake CRI /hung: %w", err)
	}
	defer resp.Body.Close()
	var n int64
	if _, err := fmt.Fscan(resp.Body, &n); err != nil {
		return 0, fmt.Errorf("fake CRI /hung: %w", err)
	}
	return n, nil
}
