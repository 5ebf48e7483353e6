package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/podline/podline/bench/internal/observe"
	"github.com/podline/podline/bench/internal/procstat"
)

// The serve scenario: what an agent's HTTP endpoints cost it. With every
// pod Running and the agent settled, GET /pods and GET /stats/summary
// serveRequests times each in a row, on the read-only port (and for the
// follower case on the authenticated port too, over TLS with a client
// certificate); then, for podline, one idle follower of /containerLogs
// per pod on the authenticated port.
const serveRequests = 20

// servePaths are the endpoints measured, in order.
var servePaths = []string{"/pods", "/stats/summary"}

// Ports as they appear in results.
const (
	portReadOnly = "read-only"
	portSecure   = "authenticated (TLS)"
)

// serveCase is one agent at one pod count, run runs times. followers
// also measures the GETs on the authenticated port and follows every
// pod's log there.
type serveCase struct {
	agent     string
	pods      int
	runs      int
	followers bool
}

func servePlan(quick bool) []serveCase {
	if quick {
		return []serveCase{{podline, 50, 1, true}, {kubelet, 50, 1, false}}
	}
	return []serveCase{
		{podline, 1000, 3, true},
		{podline, 10000, 3, false},
		{kubelet, 1000, 3, false},
	}
}

// serveRun is what one run of a case measured.
type serveRun struct {
	Agent    string  `json:"agent"`
	Pods     int     `json:"pods"`
	Run      int     `json:"run"`
	StartSec float64 `json:"start_sec"` // manifests written → all Running
	// IdleCPUPercent is the agent's CPU over the settle before the
	// requests: the background every request's figure includes.
	IdleCPUPercent float64     `json:"idle_cpu_percent"`
	Gets           []getCost   `json:"gets"`
	Follow         *followCost `json:"follow,omitempty"`
	Errors         []string    `json:"errors,omitempty"` // GETs that failed
}

// getCost is serveRequests sequential GETs of one path on one port.
type getCost struct {
	Port     string  `json:"port"`
	Path     string  `json:"path"`
	Requests int     `json:"requests"`
	CPUms    float64 `json:"cpu_ms"`     // agent utime+stime per request (10 ms ticks)
	RunMs    float64 `json:"run_ms"`     // agent run time per request from per-thread schedstat
	NetCPUms float64 `json:"net_cpu_ms"` // CPUms less the idle rate over the requests' time
	P50ms    float64 `json:"p50_ms"`
	P99ms    float64 `json:"p99_ms"`
	Bytes    int64   `json:"bytes"` // response body
	Error    string  `json:"error,omitempty"`
}

// getter fetches a path; the caller reads and closes the body.
type getter func(ctx context.Context, path string) (io.ReadCloser, error)

// fetch is one GET read to the end; it returns the body's size.
func fetch(ctx context.Context, get getter, path string) (int64, error) {
	body, err := get(ctx, path)
	if err != nil {
		return 0, err
	}
	defer body.Close()
	return io.Copy(io.Discard, body)
}

// measureGets is one warm-up GET of path (it opens the kept-alive
// connection, TLS handshake included), then n in a row, measured.
func measureGets(ctx context.Context, pid int, get getter, port, path string, n int, idlePercent float64) getCost {
	res := getCost{Port: port, Path: path, Requests: n}
	if _, err := fetch(ctx, get, path); err != nil {
		res.Error = err.Error()
		return res
	}
	c0, err := procstat.Read(pid, true)
	if err != nil {
		res.Error = err.Error()
		return res
	}
	lat := make([]float64, 0, n)
	t0 := time.Now()
	for range n {
		start := time.Now()
		size, err := fetch(ctx, get, path)
		if err != nil {
			res.Error = err.Error()
			return res
		}
		lat = append(lat, ms(time.Since(start)))
		res.Bytes = size
	}
	elapsed := time.Since(t0)
	c1, err := procstat.Read(pid, true)
	if err != nil {
		res.Error = err.Error()
		return res
	}
	run, _ := c1.Since(c0)
	res.CPUms = (c1.CPUSeconds() - c0.CPUSeconds()) * 1000 / float64(n)
	res.RunMs = float64(run) / 1e6 / float64(n)
	res.NetCPUms = res.CPUms - idlePercent/100*ms(elapsed)/float64(n)
	slices.Sort(lat)
	res.P50ms, res.P99ms = quantile(lat, 0.5), quantile(lat, 0.99)
	return res
}

// serveScenario runs every case of the plan and writes serve.json and
// serve.md into out.
func (s *suite) serveScenario(ctx context.Context, out string) error {
	var cases []serveCase
	for _, sc := range servePlan(s.cfg.quick) {
		if sc.agent != kubelet || s.kubelet != "" {
			cases = append(cases, sc)
		}
	}
	return runCases(ctx, "serve", out, cases,
		func(sc serveCase) int { return sc.runs },
		func(sc serveCase) string { return fmt.Sprintf("%s %d pods", sc.agent, sc.pods) },
		func(sc serveCase, n int, label string) (serveRun, error) { return s.serveCase(ctx, sc, n, label) },
		func(runs []serveRun, failed []string) error { return writeServe(out, s, runs, failed) })
}

func (s *suite) serveCase(ctx context.Context, sc serveCase, n int, label string) (serveRun, error) {
	res := serveRun{Agent: sc.agent, Pods: sc.pods, Run: n}
	dir, err := os.MkdirTemp(s.tmp, "serve-")
	if err != nil {
		return res, err
	}
	defer os.RemoveAll(dir)
	progress("%s: starting", label)
	f, err := startFakeCRI(ctx, s.fakecri, dir, fakeC)
	if err != nil {
		return res, err
	}
	defer f.stop(5 * time.Second)
	k := key(sc.agent, dflt, fakeC, sc.pods)
	var a agent
	var pki *servePKI
	var securePort int
	if sc.agent == podline {
		if pki, err = newServePKI(dir); err != nil {
			return res, err
		}
		var pa *podlineAgent
		pa, securePort, err = startServePodline(ctx, s.podline, dir, "unix://"+f.socket, sc.pods, pki)
		a = pa
	} else {
		a, err = s.startAgent(ctx, k, dir, "unix://"+f.socket)
	}
	if err != nil {
		return res, err
	}
	defer release(a, label)
	// The kubelet keeps initialising for seconds after it serves /pods
	// (see runCase); podline is ready once it does.
	if sc.agent == kubelet {
		if err := sleep(ctx, s.settle()); err != nil {
			return res, err
		}
	}

	w := newPodWriter(a.manifests())
	names := make([]string, sc.pods)
	start := time.Now()
	for i := range names {
		if names[i], err = w.add(fmt.Sprintf("bench-%05d", i)); err != nil {
			return res, err
		}
	}
	wt := newWatcher(a, sc.pods)
	if err := wt.allRunning(ctx, label, names, 5*time.Minute+time.Duration(sc.pods)*20*time.Millisecond); err != nil {
		return res, err
	}
	res.StartSec = time.Since(start).Seconds()
	progress("%s: all %d Running in %.1fs", label, sc.pods, res.StartSec)

	// Settled: the settle's CPU is the idle background of the requests.
	c0, err := procstat.Read(a.pid(), false)
	if err != nil {
		return res, err
	}
	t0 := time.Now()
	if err := sleep(ctx, s.settle()); err != nil {
		return res, err
	}
	c1, err := procstat.Read(a.pid(), false)
	if err != nil {
		return res, err
	}
	res.IdleCPUPercent = 100 * (c1.CPUSeconds() - c0.CPUSeconds()) / time.Since(t0).Seconds()

	type port struct {
		name string
		get  getter
	}
	ports := []port{{portReadOnly, a.client().Get}}
	var tc *tlsClient
	if sc.followers {
		tc = newTLSClient(securePort, pki)
		defer tc.close()
		ports = append(ports, port{portSecure, tc.Get})
	}
	for _, g := range ports {
		for _, path := range servePaths {
			gc := measureGets(ctx, a.pid(), g.get, g.name, path, serveRequests, res.IdleCPUPercent)
			if gc.Error != "" {
				res.Errors = append(res.Errors, fmt.Sprintf("%s %s: %s", g.name, path, gc.Error))
				progress("%s: %s %s: %s", label, g.name, path, gc.Error)
			} else {
				progress("%s: %s %s: CPU %.2f ms/request (schedstat %.2f, net of idle %.2f), p50 %.1f ms, p99 %.1f ms, %d bytes",
					label, g.name, path, gc.CPUms, gc.RunMs, gc.NetCPUms, gc.P50ms, gc.P99ms, gc.Bytes)
			}
			res.Gets = append(res.Gets, gc)
		}
	}
	if a.exited() {
		return res, a.errExited()
	}
	if !sc.followers {
		return res, nil
	}
	tc.close() // the GETs' connection is not part of the baseline
	fc, err := s.followCase(ctx, a, dir, securePort, pki, label)
	if err != nil {
		return res, err
	}
	res.Follow = fc
	if a.exited() {
		return res, a.errExited()
	}
	return res, nil
}

// startServePodline starts podline as startPodline does, with the
// authenticated port on a free loopback port: its serving certificate and
// client CA from pki, AlwaysAllow authorization. It returns that port.
func startServePodline(ctx context.Context, bin, dir, endpoint string, pods int, pki *servePKI) (*podlineAgent, int, error) {
	ports := [2]int{}
	for i := range ports {
		p, err := observe.FreePort()
		if err != nil {
			return nil, 0, err
		}
		ports[i] = p
	}
	if ports[0] == ports[1] {
		return nil, 0, fmt.Errorf("free port %d handed out twice", ports[0])
	}
	a := &podlineAgent{
		dir:         dir,
		manifestDir: filepath.Join(dir, "manifests"),
		cgroupRoot:  "/podline-bench-" + filepath.Base(dir),
		c:           observe.New(fmt.Sprintf("http://127.0.0.1:%d", ports[0])),
	}
	if err := os.MkdirAll(a.manifestDir, 0o755); err != nil {
		return nil, 0, err
	}
	argv := []string{bin,
		"--container-runtime-endpoint", endpoint,
		"--pod-manifest-path", a.manifestDir,
		"--root-dir", filepath.Join(dir, "root"),
		"--pod-logs-dir", servePodLogsDir(dir),
		"--cgroup-root", a.cgroupRoot,
		"--hostname-override", nodeName,
		"--read-only-port", strconv.Itoa(ports[0]),
		"--address", "127.0.0.1",
		"--healthz-port", "0",
		"--port", strconv.Itoa(ports[1]),
		"--tls-cert-file", pki.serverCert,
		"--tls-private-key-file", pki.serverKey,
		"--client-ca-file", pki.caFile,
		"--authorization-mode", "AlwaysAllow",
		"--max-pods", strconv.Itoa(pods + pods/10 + 10),
	}
	var err error
	if a.proc, err = startProc("podline", filepath.Join(dir, "podline.log"), argv...); err != nil {
		return nil, 0, err
	}
	err = a.waitFor(ctx, 20*time.Second, func() error {
		_, _, err := a.c.Pods(ctx)
		return err
	})
	if err != nil {
		a.stop()
		return nil, 0, err
	}
	return a, ports[1], nil
}

func servePodLogsDir(dir string) string { return filepath.Join(dir, "logs") }

func writeServe(out string, s *suite, runs []serveRun, failed []string) error {
	return writeCases(out, "serve", s.run, runs, failed, serveMarkdown(s.run, s.settle(), serveWindow(s.cfg.quick), runs, failed))
}
