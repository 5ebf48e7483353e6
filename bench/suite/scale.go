package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/podline/podline/bench/internal/procstat"
)

// The scale scenario: what podline costs as the pods it holds grow, at
// 0, 1,000, 3,000 and 10,000 pods. Each run starts a fresh fake CRI and a
// fresh podline, hands it N pods at once, and measures the start, the
// footprint once settled (RSS, Go heap), the idle CPU with nobody polling,
// the cost of one GET /pods, and the delete of every pod at once. Each N
// runs -scale-runs times; the report gives medians with the range.
const (
	// scaleSettle is how long the agent is left alone once every pod
	// is Running, before its memory is read: the start's garbage is
	// collected and its caches have taken their steady size.
	scaleSettle = 30 * time.Second
	// scaleGets is the GET /pods measured per run: a handful, since one
	// at 10,000 pods encodes every pod.
	scaleGets = 5
	// scalePreload is the fake CRI's image set: the pause image alone,
	// so that busybox, every pod's image, is absent and must be pulled.
	scalePreload = "registry.k8s.io/pause:3.10"
)

// scaleCase is one run: N pods, in set set of sets. A set is one pass over
// every N, the N=0 run included, so that each set has an empty agent of
// its own to subtract, measured minutes from the others rather than an
// hour.
type scaleCase struct {
	pods      int
	set, sets int
}

func scalePods(quick bool) []int {
	if quick {
		return []int{0, 50, 200}
	}
	return []int{0, 1000, 3000, 10000}
}

// scalePlan lists the runs in order: set 1 at every N, then set 2, and so
// on; only, when not negative, keeps the runs at that N alone.
func scalePlan(quick bool, sets, only int) []scaleCase {
	var out []scaleCase
	for set := 1; set <= sets; set++ {
		for _, n := range scalePods(quick) {
			if only < 0 || n == only {
				out = append(out, scaleCase{pods: n, set: set, sets: sets})
			}
		}
	}
	return out
}

// scaleRun is what one run measured.
type scaleRun struct {
	Pods int `json:"pods"`
	Set  int `json:"set"`
	// Events is the fake CRI's --events: how its container event
	// stream answers ("stream" unless -scale-events said otherwise).
	Events string `json:"events,omitempty"`

	// Start: manifests written → every pod Running in /pods. The CPU is
	// the agent's utime+stime over that span, the watcher's polls of
	// /pods included; StartPollCPUSec estimates them as polls × the cost
	// of one GET /pods at N, an upper bound since most polls listed fewer.
	StartSec        float64 `json:"start_sec"`
	StartCPUSec     float64 `json:"start_cpu_sec"`
	StartPolls      int     `json:"start_polls"`
	StartPollCPUSec float64 `json:"start_poll_cpu_sec"`
	// StartSysCPUSec is the stime part of StartCPUSec: the kernel's work
	// for the agent (cgroup mkdirs above all).
	StartSysCPUSec float64 `json:"start_sys_cpu_sec"`

	// PullImage is the fake CRI's PullImage calls by image once every pod
	// is Running. The fake counts calls per method only: all of them are
	// the pods' image's, the one image it did not hold (pause is
	// preloaded and no pod names another). Calls holds every method's.
	PullImage map[string]int64 `json:"pull_image"`
	Calls     map[string]int64 `json:"calls"`
	// podline's own count of the pulls it asked for, and of the pods that
	// shared a pull in flight instead (-1: not exposed).
	AgentPulls       float64 `json:"agent_pulls"`
	AgentPullsShared float64 `json:"agent_pulls_shared"`

	// Footprint after scaleSettle: VmRSS, and the Go runtime's view from
	// /metrics (go_memstats_*).
	RSSMiB       float64 `json:"rss_mib"`
	HeapAllocMiB float64 `json:"heap_alloc_mib"`
	HeapInuseMiB float64 `json:"heap_inuse_mib"`
	GoSysMiB     float64 `json:"go_sys_mib"`
	Goroutines   int     `json:"goroutines"`
	// Per pod, less the empty agent (see perPod); filled when written.
	RSSPerPodKiB  float64 `json:"rss_per_pod_kib"`
	HeapPerPodKiB float64 `json:"heap_per_pod_kib"`
	PerPodBase    string  `json:"per_pod_base,omitempty"`

	// Idle: a window with nothing changing and nobody talking to the
	// agent. CPU is utime+stime (10 ms ticks); Run the threads' schedstat
	// run time, finer-grained for a short window.
	IdleWindowSec     float64 `json:"idle_window_sec"`
	IdleCPUPercent    float64 `json:"idle_cpu_percent"`
	IdleRunPercent    float64 `json:"idle_run_percent"`
	IdleWakeupsPerSec float64 `json:"idle_wakeups_per_sec"`
	RSSAfterIdleMiB   float64 `json:"rss_after_idle_mib"`
	// RuntimeIdleCPUPercent is the fake CRI's utime+stime over the same
	// window: what the agent's calls cost the runtime.
	RuntimeIdleCPUPercent float64 `json:"runtime_idle_cpu_percent"`

	Get getCost `json:"get_pods"`

	// Delete: every manifest removed at once → the fake CRI holds no
	// sandbox and /pods lists no pod. The CPU is the agent's over that
	// span; DeletePolls are the GET /pods made in it (only once the
	// runtime was empty: asking the runtime costs the agent nothing).
	DeleteSec    float64 `json:"delete_sec"`
	DeleteCPUSec float64 `json:"delete_cpu_sec"`
	DeletePolls  int     `json:"delete_polls"`
	// DeleteSysCPUSec is the stime part of DeleteCPUSec.
	DeleteSysCPUSec float64 `json:"delete_sys_cpu_sec"`
}

// scaleScenario runs every case of the plan and writes scale.json,
// scale.md and the plots into out.
func (s *suite) scaleScenario(ctx context.Context, out string) error {
	cases := scalePlan(s.cfg.quick, s.cfg.scaleRuns, s.cfg.scalePods)
	var last string
	err := runCases(ctx, "scale", out, cases,
		func(scaleCase) int { return 1 },
		func(sc scaleCase) string { return fmt.Sprintf("set %d/%d, %d pods", sc.set, sc.sets, sc.pods) },
		func(sc scaleCase, _ int, label string) (scaleRun, error) { return s.scaleCase(ctx, sc, label) },
		func(runs []scaleRun, failed []string) error {
			md, err := writeScale(out, s, runs, failed)
			last = md
			return err
		})
	fmt.Println(last)
	return err
}

func (s *suite) scaleCase(ctx context.Context, sc scaleCase, label string) (scaleRun, error) {
	res := scaleRun{Pods: sc.pods, Set: sc.set, Events: s.cfg.scaleEvents, AgentPulls: -1, AgentPullsShared: -1, Goroutines: -1}
	dir, err := os.MkdirTemp(s.tmp, "scale-")
	if err != nil {
		return res, err
	}
	defer os.RemoveAll(dir)
	control := filepath.Join(dir, "control.sock")
	progress("%s: starting", label)
	f, err := startFakeCRI(ctx, s.fakecri, dir, fakeC, "--preload", scalePreload, "--control", control, "--events", s.cfg.scaleEvents)
	if err != nil {
		return res, err
	}
	defer f.stop(5 * time.Second)
	a, err := startPodline(ctx, s.podline, dir, "unix://"+f.socket, key(podline, dflt, fakeC, sc.pods))
	if err != nil {
		return res, err
	}
	defer release(a, label)
	// The agent's own start is not the pods': it is let finish first.
	if err := sleep(ctx, s.settle()); err != nil {
		return res, err
	}

	w := newPodWriter(a.manifests())
	polls, err := scaleStart(ctx, a, w, &res, label)
	if err != nil {
		return res, err
	}
	calls, err := fakeCalls(ctx, control)
	if err != nil {
		return res, fmt.Errorf("fake CRI call counts: %w", err)
	}
	res.Calls = calls
	res.PullImage = map[string]int64{image: calls["PullImage"]}

	if err := s.scaleFootprint(ctx, a, f.pid(), &res, label); err != nil {
		return res, err
	}
	res.Get = measureGets(ctx, a.pid(), a.client().Get, portReadOnly, "/pods", scaleGets, res.IdleCPUPercent)
	if res.Get.Error != "" {
		return res, fmt.Errorf("GET /pods: %s", res.Get.Error)
	}
	res.StartPollCPUSec = float64(polls) * res.Get.CPUms / 1000
	progress("%s: GET /pods %.2f ms CPU, %d bytes", label, res.Get.CPUms, res.Get.Bytes)

	if err := scaleDelete(ctx, a, f.socket, w, &res, label); err != nil {
		return res, err
	}
	if a.exited() {
		return res, a.errExited()
	}
	return res, nil
}

// scaleStart writes every manifest at once and waits until all are
// Running; it returns the watcher's polls.
func scaleStart(ctx context.Context, a agent, w *podWriter, res *scaleRun, label string) (int, error) {
	c0, err := procstat.Read(a.pid(), false)
	if err != nil {
		return 0, fmt.Errorf("agent CPU before the start: %w", err)
	}
	names := make([]string, res.Pods)
	start := time.Now()
	for i := range names {
		if names[i], err = w.add(fmt.Sprintf("bench-%05d", i)); err != nil {
			return 0, fmt.Errorf("write manifest %d: %w", i, err)
		}
	}
	wt := newWatcher(a, res.Pods)
	if err := wt.allRunning(ctx, label, names, 2*time.Minute+time.Duration(res.Pods)*20*time.Millisecond); err != nil {
		return 0, err
	}
	res.StartSec = time.Since(start).Seconds()
	c1, err := procstat.Read(a.pid(), false)
	if err != nil {
		return 0, fmt.Errorf("agent CPU after the start: %w", err)
	}
	res.StartCPUSec = c1.CPUSeconds() - c0.CPUSeconds()
	res.StartSysCPUSec = float64(c1.SysTicks-c0.SysTicks) / procstat.ClockTicks
	res.StartPolls = wt.polls
	progress("%s: all %d Running in %.1fs, agent CPU %.2fs (%d polls)", label, res.Pods, res.StartSec, res.StartCPUSec, wt.polls)
	return wt.polls, nil
}

// scaleFootprint lets the agent settle, reads its memory, then measures
// its idle CPU with nobody talking to it.
func (s *suite) scaleFootprint(ctx context.Context, a agent, runtimePid int, res *scaleRun, label string) error {
	settle := scaleSettle
	if s.cfg.quick {
		settle = s.settle()
	}
	if err := sleep(ctx, settle); err != nil {
		return err
	}
	c, err := procstat.Read(a.pid(), false)
	if err != nil {
		return fmt.Errorf("agent RSS: %w", err)
	}
	res.RSSMiB = mib(float64(c.RSS))
	m, err := readMetrics(ctx, a)
	if err != nil {
		return fmt.Errorf("agent /metrics: %w", err)
	}
	mem, err := memStatsOf(m)
	if err != nil {
		return err
	}
	res.HeapAllocMiB, res.HeapInuseMiB, res.GoSysMiB = mib(mem.heapAlloc), mib(mem.heapInuse), mib(mem.sys)
	res.Goroutines = mem.goroutines
	res.AgentPulls, res.AgentPullsShared = mem.pulls, mem.pullsShared
	progress("%s: RSS %.1f MiB, heap alloc %.1f MiB, inuse %.1f MiB, Go sys %.1f MiB", label, res.RSSMiB, res.HeapAllocMiB, res.HeapInuseMiB, res.GoSysMiB)

	// The scrape's own work (encoding, its garbage) is let finish before
	// the window opens, as the probes scenario does.
	if err := sleep(ctx, min(5*time.Second, s.settle())); err != nil {
		return err
	}
	c0, err := procstat.Read(a.pid(), true)
	if err != nil {
		return fmt.Errorf("agent CPU before the idle window: %w", err)
	}
	r0, err := procstat.Read(runtimePid, false)
	if err != nil {
		return fmt.Errorf("runtime CPU before the idle window: %w", err)
	}
	t0 := time.Now()
	if err := sleep(ctx, s.cfg.idleWindow); err != nil {
		return err
	}
	if a.exited() {
		return a.errExited()
	}
	c1, err := procstat.Read(a.pid(), true)
	if err != nil {
		return fmt.Errorf("agent CPU after the idle window: %w", err)
	}
	r1, err := procstat.Read(runtimePid, false)
	if err != nil {
		return fmt.Errorf("runtime CPU after the idle window: %w", err)
	}
	secs := time.Since(t0).Seconds()
	res.RuntimeIdleCPUPercent = 100 * (r1.CPUSeconds() - r0.CPUSeconds()) / secs
	run, sw := c1.Since(c0)
	res.IdleWindowSec = secs
	res.IdleCPUPercent = 100 * (c1.CPUSeconds() - c0.CPUSeconds()) / secs
	res.IdleRunPercent = 100 * float64(run) / 1e9 / secs
	res.IdleWakeupsPerSec = float64(sw) / secs
	res.RSSAfterIdleMiB = mib(float64(c1.RSS))
	progress("%s: idle %.3f%% of a core (schedstat %.3f%%), %.0f wakeups/s over %.0fs; runtime %.3f%%", label, res.IdleCPUPercent, res.IdleRunPercent, res.IdleWakeupsPerSec, secs, res.RuntimeIdleCPUPercent)
	return nil
}

func mib(bytes float64) float64 { return bytes / (1 << 20) }
