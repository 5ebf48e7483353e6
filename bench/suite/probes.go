package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/podline/podline/bench/internal/observe"
	"github.com/podline/podline/bench/internal/procstat"
	"github.com/podline/podline/bench/internal/result"
)

// The probes scenario: N pods, each with an HTTP readiness probe and an
// exec liveness probe every probePeriod, in steady state once every pod is
// Running and Ready. The fake CRI gives pods loopback addresses
// (probeSubnet), so one HTTP server of the suite's, on 0.0.0.0, answers
// every pod's readiness probe and records when each pod was probed; its
// ExecSync answers at once with exit code 0.
const (
	probePeriod = 10 * time.Second
	probeSubnet = "127.88.0.0/16"
)

// probeCase is one agent at one pod count, run probeRuns times.
type probeCase struct {
	agent string
	pods  int
	runs  int
}

func probePlan(quick bool, runs int) []probeCase {
	if quick {
		return []probeCase{{podline, 50, 1}, {kubelet, 50, 1}}
	}
	return []probeCase{
		{podline, 1000, runs},
		{podline, 10000, runs},
		{kubelet, 1000, max(1, runs-2)},
	}
}

// probeRun is what one run measured over its window.
type probeRun struct {
	Agent string `json:"agent"`
	Pods  int    `json:"pods"`
	Run   int    `json:"run"`

	StartSec  float64 `json:"start_sec"`  // manifests written → all Running and Ready
	WindowSec float64 `json:"window_sec"` // the steady-state window

	CPUPercent       float64 `json:"cpu_percent"`        // agent CPU, % of one core (utime+stime)
	HTTPPerSec       float64 `json:"http_per_sec"`       // readiness probes the suite's server answered
	ExecPerSec       float64 `json:"exec_per_sec"`       // ExecSync calls the fake CRI answered
	ProbesPerSec     float64 `json:"probes_per_sec"`     // the two together
	ExpectedPerSec   float64 `json:"expected_per_sec"`   // 2 × pods / period
	CPUPer1kProbes   float64 `json:"cpu_per_1k_probes"`  // % of a core per 1,000 probes/s
	ProberTotalPerSc float64 `json:"prober_total_per_s"` // growth of prober_probe_total (-1: not exposed)

	// Lateness is |interval − period| between consecutive readiness
	// probes of a pod, both inside the window, in ms.
	Intervals  int     `json:"intervals"`
	LateP50ms  float64 `json:"late_p50_ms"`
	LateP99ms  float64 `json:"late_p99_ms"`
	LateMaxms  float64 `json:"late_max_ms"`
	PodsMissed int     `json:"pods_missed"` // pods without a readiness probe in the window

	Goroutines int     `json:"goroutines"` // go_goroutines at the window's end (-1: not exposed)
	FDs        int     `json:"fds"`        // /proc/<pid>/fd entries at the window's end
	Threads    int     `json:"threads"`
	RSSMiB     float64 `json:"rss_mib"`
	RuntimeCPU float64 `json:"runtime_cpu_percent"` // the fake CRI's
}

// probeServer answers every readiness probe, /ready/<pod>, with 200 and
// records when each pod asked.
type probeServer struct {
	ln   net.Listener
	srv  *http.Server
	mu   sync.Mutex
	hits map[string][]time.Time
}

func startProbeServer() (*probeServer, error) {
	ln, err := net.Listen("tcp", "0.0.0.0:0")
	if err != nil {
		return nil, err
	}
	p := &probeServer{ln: ln, hits: map[string][]time.Time{}}
	p.srv = &http.Server{Handler: p, ReadHeaderTimeout: 5 * time.Second}
	go p.srv.Serve(ln)
	return p, nil
}

func (p *probeServer) port() int { return p.ln.Addr().(*net.TCPAddr).Port }

func (p *probeServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	now := time.Now()
	pod, ok := strings.CutPrefix(r.URL.Path, "/ready/")
	if !ok {
		http.NotFound(w, r)
		return
	}
	p.mu.Lock()
	p.hits[pod] = append(p.hits[pod], now)
	p.mu.Unlock()
	io.WriteString(w, "ok")
}

func (p *probeServer) close() { p.srv.Close() }

// window returns the request times of every pod inside [t0, t1].
func (p *probeServer) window(t0, t1 time.Time) map[string][]time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make(map[string][]time.Time, len(p.hits))
	for pod, ts := range p.hits {
		var in []time.Time
		for _, t := range ts {
			if !t.Before(t0) && !t.After(t1) {
				in = append(in, t)
			}
		}
		out[pod] = in
	}
	return out
}

func probeManifest(port int) func(name string) []byte {
	return func(name string) []byte {
		return fmt.Appendf(nil, `apiVersion: v1
kind: Pod
metadata:
  name: %s
spec:
  restartPolicy: Always
  terminationGracePeriodSeconds: 1
  containers:
  - name: app
    image: %s
    imagePullPolicy: IfNotPresent
    command: ["sleep", "86400"]
    readinessProbe:
      httpGet:
        path: /ready/%s
        port: %d
      periodSeconds: %d
    livenessProbe:
      exec:
        command: ["true"]
      periodSeconds: %d
`, name, image, name, port, int(probePeriod/time.Second), int(probePeriod/time.Second))
	}
}

// fakeCalls reads the fake CRI's call counts from its control socket.
func fakeCalls(ctx context.Context, sock string) (map[string]int64, error) {
	c := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", sock)
	}}}
	defer c.CloseIdleConnections()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://fakecri/calls", nil)
	if err != nil {
		return nil, err
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	m := map[string]int64{}
	return m, json.NewDecoder(resp.Body).Decode(&m)
}

// probeTotal sums prober_probe_total over every series of /metrics/probes;
// ok is false when the agent does not serve it.
func probeTotal(ctx context.Context, c *observe.Client) (float64, bool) {
	body, err := c.Get(ctx, "/metrics/probes")
	if err != nil {
		return 0, false
	}
	defer body.Close()
	m, err := parseMetrics(body)
	if err != nil {
		return 0, false
	}
	sum, found := 0.0, false
	for series, v := range m.samples {
		if strings.HasPrefix(series, "prober_probe_total{") || series == "prober_probe_total" {
			sum += v
			found = true
		}
	}
	return sum, found
}

func goroutines(ctx context.Context, a agent) int {
	m, err := readMetrics(ctx, a)
	if err != nil {
		return -1
	}
	v, ok := m.samples["go_goroutines"]
	if !ok {
		return -1
	}
	return int(v)
}

func countDir(path string) int {
	es, err := os.ReadDir(path)
	if err != nil {
		return -1
	}
	return len(es)
}

// probesScenario runs every case of the plan and writes probes.json and
// probes.md into out.
func (s *suite) probesScenario(ctx context.Context, out string) error {
	var cases []probeCase
	for _, pc := range probePlan(s.cfg.quick, s.cfg.probeRuns) {
		if !slices.Contains(strings.Split(s.cfg.probeAgents, ","), pc.agent) || (pc.agent == kubelet && s.kubelet == "") {
			continue
		}
		if s.cfg.probePods != 0 && pc.pods != s.cfg.probePods {
			continue
		}
		cases = append(cases, pc)
	}
	return runCases(ctx, "probes", out, cases,
		func(pc probeCase) int { return pc.runs },
		func(pc probeCase) string { return fmt.Sprintf("%s %d pods", pc.agent, pc.pods) },
		func(pc probeCase, n int, label string) (probeRun, error) { return s.probeCase(ctx, pc, n, label) },
		func(runs []probeRun, failed []string) error { return writeProbes(out, s.run, runs, failed) })
}

func (s *suite) probeCase(ctx context.Context, pc probeCase, n int, label string) (probeRun, error) {
	res := probeRun{Agent: pc.agent, Pods: pc.pods, Run: n, ProberTotalPerSc: -1, Goroutines: -1}
	dir, err := os.MkdirTemp(s.tmp, "probes-")
	if err != nil {
		return res, err
	}
	defer os.RemoveAll(dir)
	srv, err := startProbeServer()
	if err != nil {
		return res, err
	}
	defer srv.close()
	control := filepath.Join(dir, "control.sock")
	progress("%s: starting (probe server on :%d)", label, srv.port())
	f, err := startFakeCRI(ctx, s.fakecri, dir, fakeC,
		"--pod-subnet", probeSubnet, "--latency", "ExecSync=0s", "--control", control)
	if err != nil {
		return res, err
	}
	defer f.stop(5 * time.Second)
	k := key(pc.agent, dflt, fakeC, pc.pods)
	a, err := s.startAgent(ctx, k, dir, "unix://"+f.socket)
	if err != nil {
		return res, err
	}
	defer release(a, label)
	if err := sleep(ctx, s.settle()); err != nil {
		return res, err
	}

	w := newPodWriter(a.manifests())
	w.manifest = probeManifest(srv.port())
	names := make([]string, 0, pc.pods)
	start := time.Now()
	for i := range pc.pods {
		name, err := w.add(fmt.Sprintf("bench-%05d", i))
		if err != nil {
			return res, err
		}
		names = append(names, name)
	}
	wt := newWatcher(a, pc.pods)
	err = wt.until(ctx, label, 15*time.Minute, func(int) (bool, string) {
		running, ready := 0, 0
		for _, name := range names {
			if _, ok := wt.running[name]; ok {
				running++
			}
			if _, ok := wt.ready[name]; ok {
				ready++
			}
		}
		return ready == len(names), fmt.Sprintf("%d/%d Running, %d Ready", running, len(names), ready)
	})
	if err != nil {
		return res, err
	}
	res.StartSec = time.Since(start).Seconds()
	progress("%s: all %d pods Running and Ready in %.1fs", label, pc.pods, res.StartSec)

	// Steady state: one more period for the last pods' probes to settle
	// into their phase, then the window, with nobody polling the agent.
	if err := sleep(ctx, min(probePeriod, s.settle())); err != nil {
		return res, err
	}
	calls0, err := fakeCalls(ctx, control)
	if err != nil {
		return res, fmt.Errorf("fake CRI calls: %w", err)
	}
	tc0 := time.Now()
	pt0, hasPT := probeTotal(ctx, a.client())
	tp0 := time.Now()
	// The scrape of /metrics/probes (tens of thousands of series at
	// 10,000 pods) leaves garbage whose collection is no probing cost:
	// it is let finish before the window opens.
	if err := sleep(ctx, min(5*time.Second, s.settle())); err != nil {
		return res, err
	}
	rt0, err := procstat.Read(f.pid(), false)
	if err != nil {
		return res, err
	}
	c0, err := procstat.Read(a.pid(), false)
	if err != nil {
		return res, err
	}
	t0 := time.Now()
	if err := sleep(ctx, s.cfg.probeWindow); err != nil {
		return res, err
	}
	c1, err := procstat.Read(a.pid(), false)
	if err != nil {
		return res, err
	}
	t1 := time.Now()
	rt1, _ := procstat.Read(f.pid(), false)
	calls1, err := fakeCalls(ctx, control)
	if err != nil {
		return res, fmt.Errorf("fake CRI calls: %w", err)
	}
	// The calls are counted from before the settle: per second of their
	// own span, not the CPU window's.
	tcSecs := time.Since(tc0).Seconds()
	pt1, _ := probeTotal(ctx, a.client())
	ptSecs := time.Since(tp0).Seconds()
	if a.exited() {
		return res, a.errExited()
	}
	secs := t1.Sub(t0).Seconds()
	res.WindowSec = secs
	res.CPUPercent = 100 * (c1.CPUSeconds() - c0.CPUSeconds()) / secs
	res.RuntimeCPU = 100 * (rt1.CPUSeconds() - rt0.CPUSeconds()) / secs
	res.RSSMiB = float64(c1.RSS) / (1 << 20)
	res.FDs = countDir(fmt.Sprintf("/proc/%d/fd", a.pid()))
	res.Threads = countDir(fmt.Sprintf("/proc/%d/task", a.pid()))
	res.Goroutines = goroutines(ctx, a)
	if hasPT {
		res.ProberTotalPerSc = (pt1 - pt0) / ptSecs
	}
	res.ExecPerSec = float64(calls1["ExecSync"]-calls0["ExecSync"]) / tcSecs

	hits := srv.window(t0, t1)
	var late []float64
	httpN := 0
	for _, name := range names {
		ts := hits[strings.TrimSuffix(name, "-"+nodeName)]
		httpN += len(ts)
		if len(ts) == 0 {
			res.PodsMissed++
		}
		for j := 1; j < len(ts); j++ {
			d := ts[j].Sub(ts[j-1]) - probePeriod
			late = append(late, math.Abs(float64(d))/float64(time.Millisecond))
		}
	}
	res.HTTPPerSec = float64(httpN) / secs
	res.ProbesPerSec = res.HTTPPerSec + res.ExecPerSec
	res.ExpectedPerSec = 2 * float64(pc.pods) / probePeriod.Seconds()
	if res.ProbesPerSec > 0 {
		res.CPUPer1kProbes = res.CPUPercent / (res.ProbesPerSec / 1000)
	}
	res.Intervals = len(late)
	if len(late) > 0 {
		sort.Float64s(late)
		res.LateP50ms = quantile(late, 0.5)
		res.LateP99ms = quantile(late, 0.99)
		res.LateMaxms = late[len(late)-1]
	}
	progress("%s: CPU %.2f%% (%.2f%%/1k probes/s), probes/s %.0f (http %.0f, exec %.0f, expected %.0f, prober_probe_total %.0f/s), lateness p50 %.1f ms p99 %.1f ms max %.1f ms, goroutines %d, fds %d, threads %d, RSS %.0f MiB, runtime CPU %.1f%%",
		label, res.CPUPercent, res.CPUPer1kProbes, res.ProbesPerSec, res.HTTPPerSec, res.ExecPerSec, res.ExpectedPerSec, res.ProberTotalPerSc,
		res.LateP50ms, res.LateP99ms, res.LateMaxms, res.Goroutines, res.FDs, res.Threads, res.RSSMiB, res.RuntimeCPU)
	return res, nil
}

// quantile of sorted xs, nearest rank.
func quantile(xs []float64, q float64) float64 {
	i := int(math.Ceil(q*float64(len(xs)))) - 1
	return xs[max(0, min(i, len(xs)-1))]
}

func writeProbes(out string, run *result.Run, runs []probeRun, failed []string) error {
	return writeCases(out, "probes", run, runs, failed, probesMarkdown(run, runs, failed))
}

// probesMarkdown: every run, then per agent and pod count the median with
// the range of the runs.
func probesMarkdown(run *result.Run, runs []probeRun, failed []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# probes: steady-state probing cost\n\n")
	fmt.Fprintf(&b, "- machine: %s, %d CPUs, kernel %s\n- podline: %s\n- kubelet: %s\n", run.Machine.Hostname, run.Machine.CPUs, run.Machine.Kernel, run.Podline, run.Kubelet)
	fmt.Fprintf(&b, "- each pod: one container, an httpGet readiness probe and an exec liveness probe, both periodSeconds %d; fake CRI (containerd-like latencies, ExecSync 0 ms, pod addresses in %s), one HTTP server of the suite's answering every pod\n", int(probePeriod/time.Second), probeSubnet)
	fmt.Fprintf(&b, "- measured over a window once every pod was Running and Ready (plus %s), nobody polling the agent. CPU is utime+stime from /proc/<pid>/stat, %% of one core; lateness is |interval − %s| between consecutive readiness requests of a pod as the suite's server saw them\n\n", "a settle", probePeriod)

	type group struct {
		agent string
		pods  int
	}
	var groups []group
	by := map[group][]probeRun{}
	for _, r := range runs {
		g := group{r.Agent, r.Pods}
		if _, ok := by[g]; !ok {
			groups = append(groups, g)
		}
		by[g] = append(by[g], r)
	}
	b.WriteString("## Medians (min–max over runs)\n\n")
	b.WriteString("| agent | pods | runs | CPU % of a core | CPU %/1k probes/s | probes/s (expected) | prober_probe_total/s | lateness p50 ms | lateness p99 ms | goroutines | fds | RSS MiB |\n")
	b.WriteString("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	for _, g := range groups {
		rs := by[g]
		f := func(get func(probeRun) float64, prec int) string { return medRange(rs, get, prec) }
		exp := rs[0].ExpectedPerSec
		fmt.Fprintf(&b, "| %s | %d | %d | %s | %s | %s (%.0f) | %s | %s | %s | %s | %s | %s |\n",
			g.agent, g.pods, len(rs),
			f(func(r probeRun) float64 { return r.CPUPercent }, 2),
			f(func(r probeRun) float64 { return r.CPUPer1kProbes }, 2),
			f(func(r probeRun) float64 { return r.ProbesPerSec }, 0), exp,
			f(func(r probeRun) float64 { return r.ProberTotalPerSc }, 0),
			lateCell(rs, func(r probeRun) float64 { return r.LateP50ms }),
			lateCell(rs, func(r probeRun) float64 { return r.LateP99ms }),
			f(func(r probeRun) float64 { return float64(r.Goroutines) }, 0),
			f(func(r probeRun) float64 { return float64(r.FDs) }, 0),
			f(func(r probeRun) float64 { return r.RSSMiB }, 0))
	}
	b.WriteString("\n## Every run\n\n")
	b.WriteString("| agent | pods | run | Ready s | window s | CPU % | CPU %/1k probes/s | http/s | exec/s | prober_probe_total/s | intervals | late p50 ms | late p99 ms | late max ms | pods unprobed | goroutines | fds | threads | RSS MiB | fake CRI CPU % |\n")
	b.WriteString("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	for _, r := range runs {
		fmt.Fprintf(&b, "| %s | %d | %d | %.1f | %.1f | %.2f | %.2f | %.0f | %.0f | %.0f | %d | %.1f | %.1f | %.1f | %d | %d | %d | %d | %.0f | %.1f |\n",
			r.Agent, r.Pods, r.Run, r.StartSec, r.WindowSec, r.CPUPercent, r.CPUPer1kProbes, r.HTTPPerSec, r.ExecPerSec, r.ProberTotalPerSc,
			r.Intervals, r.LateP50ms, r.LateP99ms, r.LateMaxms, r.PodsMissed, r.Goroutines, r.FDs, r.Threads, r.RSSMiB, r.RuntimeCPU)
	}
	if len(failed) > 0 {
		b.WriteString("\n## Failed runs\n\n")
		for _, f := range failed {
			fmt.Fprintf(&b, "- %s\n", strings.ReplaceAll(f, "\n", " "))
		}
	}
	return b.String()
}

// lateCell is "–" when a run's window held no interval (shorter than a
// period).
func lateCell(rs []probeRun, get func(probeRun) float64) string {
	for _, r := range rs {
		if r.Intervals == 0 {
			return "–"
		}
	}
	return medRange(rs, get, 1)
}

func medRange(rs []probeRun, get func(probeRun) float64, prec int) string {
	xs := make([]float64, len(rs))
	for i, r := range rs {
		xs[i] = get(r)
	}
	slices.Sort(xs)
	med := xs[len(xs)/2]
	if len(xs)%2 == 0 {
		med = (xs[len(xs)/2-1] + xs[len(xs)/2]) / 2
	}
	if len(xs) == 1 {
		return fmt.Sprintf("%.*f", prec, med)
	}
	return fmt.Sprintf("%.*f (%.*f–%.*f)", prec, med, prec, xs[0], prec, xs[len(xs)-1])
}
