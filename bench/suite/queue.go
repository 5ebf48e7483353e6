package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/podline/podline/bench/internal/result"
	pstages "github.com/podline/podline/stages"
)

// The queue scenario: podline's stage queues, lock-free (the default)
// against a buffered channel (--queue=channel), on the fake CRI alone. At
// each runtime and pod count the two modes alternate run by run (ABAB...),
// so drift of the machine falls on both alike. Each run is a fresh fake
// CRI and a fresh podline handed N pods at once; it measures the start
// (manifests written → all Running), the agent's CPU, and from podline's
// own /metrics what says whether the queues are on the critical path:
// each stage's queue wait and work, and how often a full queue made a
// producer park (podline_pipeline_queue_waits_total).
//
// The runs' directories (podline's root and log dirs, the manifests) are
// on a tmpfs mounted for the scenario when -queue-tmpfs is set (the
// default): file creation on the machine's disk slows after the big
// deletes of earlier runs, a drift that is the same for both modes but
// widens the spread.

// queueModes are the modes compared, in the order each pair runs.
var queueModes = []string{result.ModeDefault, result.ModeQueueChannel}

// queueSettle is how long podline is left alone before the pods come: it
// has nothing to initialise beyond its first relist.
const queueSettle = 5 * time.Second

// queueCase is one run.
type queueCase struct {
	runtime string
	pods    int
	mode    string
	run     int
	runs    int
}

// queueCases parses "runtime:pods,..." (e.g. fake-zero:10000), or, when
// spec is empty, gives every runtime × pod count.
func queueCases(spec string, runtimes []string, pods []int) ([][2]string, error) {
	var out [][2]string
	if spec == "" {
		for _, rt := range runtimes {
			for _, n := range pods {
				out = append(out, [2]string{rt, strconv.Itoa(n)})
			}
		}
		return out, nil
	}
	for _, c := range splitList(spec) {
		rt, n, ok := strings.Cut(c, ":")
		if !ok {
			return nil, fmt.Errorf("-queue-cases: %q is not runtime:pods", c)
		}
		out = append(out, [2]string{rt, n})
	}
	return out, nil
}

// queuePlan lists the runs in order: for each runtime and pod count,
// run 1 of every mode, then run 2, and so on.
func queuePlan(cfg *config) ([]queueCase, error) {
	pods := []int{100, 1000, 10000}
	if cfg.quick {
		pods = []int{50, 200}
	}
	if cfg.queuePods != "" {
		pods = nil
		for _, p := range splitList(cfg.queuePods) {
			n, err := strconv.Atoi(p)
			if err != nil || n < 1 {
				return nil, fmt.Errorf("-queue-pods: %q is not a pod count", p)
			}
			pods = append(pods, n)
		}
	}
	runtimes := splitList(cfg.queueRuntimes)
	pairs, err := queueCases(cfg.queueCases, runtimes, pods)
	if err != nil {
		return nil, err
	}
	var out []queueCase
	for _, p := range pairs {
		if p[0] != fakeZ && p[0] != fakeC {
			return nil, fmt.Errorf("queue: unknown runtime %q (known: %s,%s)", p[0], fakeZ, fakeC)
		}
		n, err := strconv.Atoi(p[1])
		if err != nil || n < 1 {
			return nil, fmt.Errorf("queue: %q is not a pod count", p[1])
		}
		for i := 1; i <= cfg.queueRuns; i++ {
			for _, m := range queueModes {
				out = append(out, queueCase{runtime: p[0], pods: n, mode: m, run: i, runs: cfg.queueRuns})
			}
		}
	}
	return out, nil
}

// queueStage is one stage's figures at the end of a run, from podline's
// histograms: everything since podline started, which is the start of the
// N pods (and their first status passes).
type queueStage struct {
	Name    string `json:"name"`
	Workers int    `json:"workers"`
	Passes  int    `json:"passes"`
	// Queue wait: from a pass put in the stage's queue to a worker taking
	// it. Sum over passes, and the histogram's quantiles (bucket upper
	// bounds).
	WaitSumSec float64 `json:"wait_sum_sec"`
	WaitP50Ms  float64 `json:"wait_p50_ms"`
	WaitP99Ms  float64 `json:"wait_p99_ms"`
	// Work: the stage's handler, per pass.
	WorkSumSec float64 `json:"work_sum_sec"`
	WorkP50Ms  float64 `json:"work_p50_ms"`
	// Depth is the gauge when read: passes queued, not yet taken.
	Depth float64 `json:"depth"`
}

// queueRun is what one run measured.
type queueRun struct {
	Runtime string `json:"runtime"`
	Pods    int    `json:"pods"`
	Mode    string `json:"mode"`
	Run     int    `json:"run"`

	StartSec      float64 `json:"start_sec"` // manifests written → all Running
	CPUSec        float64 `json:"cpu_sec"`   // agent utime+stime over the start, polls included
	PollCPUSec    float64 `json:"poll_cpu_sec"`
	RuntimeCPUSec float64 `json:"runtime_cpu_sec"`
	StartupP50Ms  float64 `json:"startup_p50_ms"`
	StartupP99Ms  float64 `json:"startup_p99_ms"`
	// PodStartMeanMs is podline's own mean pod start (its first pass to
	// Running), podline_pod_start_duration_seconds sum / count.
	PodStartMeanMs float64 `json:"pod_start_mean_ms"`
	// QueueWaits is podline_pipeline_queue_waits_total: hand-offs the
	// stage queue refused although the window left room, so the producer
	// parked in Put.
	QueueWaits float64      `json:"queue_waits"`
	Passes     float64      `json:"passes"`
	Stages     []queueStage `json:"stages"`
	Goroutines int          `json:"goroutines"`
}

// waitPerPodMs is the queue wait of every stage, summed, per pod.
func (r queueRun) waitPerPodMs() float64 {
	var s float64
	for _, st := range r.Stages {
		s += st.WaitSumSec
	}
	return s * 1000 / float64(r.Pods)
}

func (r queueRun) stage(name string) queueStage {
	for _, st := range r.Stages {
		if st.Name == name {
			return st
		}
	}
	return queueStage{Name: name}
}

// queueScenario runs the plan and writes queue.json and queue.md into out.
func (s *suite) queueScenario(ctx context.Context, out string) error {
	cases, err := queuePlan(s.cfg)
	if err != nil {
		return err
	}
	root := filepath.Join(s.tmp, "queue")
	if err := os.MkdirAll(root, 0o755); err != nil {
		return err
	}
	tmpfs := false
	if s.cfg.queueTmpfs {
		if err := syscall.Mount("tmpfs", root, "tmpfs", 0, "size=8g,mode=0755"); err != nil {
			return fmt.Errorf("queue: mount a tmpfs on %s: %w", root, err)
		}
		tmpfs = true
		defer unmountTmpfs(root)
		progress("queue: run directories on a tmpfs at %s", root)
	}
	var last string
	err = runCases(ctx, "queue", out, cases,
		func(queueCase) int { return 1 },
		func(c queueCase) string {
			return fmt.Sprintf("%s %d pods %s #%d/%d", c.runtime, c.pods, queueName(c.mode), c.run, c.runs)
		},
		func(c queueCase, _ int, label string) (queueRun, error) { return s.queueCase(ctx, root, c, label) },
		func(runs []queueRun, failed []string) error {
			md := queueMarkdown(s.run, s.cfg.quick, tmpfs, runs, failed)
			last = md
			return writeCases(out, "queue", s.run, runs, failed, md)
		})
	fmt.Println(last)
	return err
}

// unmountTmpfs unmounts the scenario's tmpfs, lazily if something still
// holds it.
func unmountTmpfs(root string) {
	if err := syscall.Unmount(root, 0); err != nil {
		if err := syscall.Unmount(root, syscall.MNT_DETACH); err != nil {
			progress("queue: unmount %s: %v", root, err)
		}
	}
}

func (s *suite) queueCase(ctx context.Context, root string, c queueCase, label string) (queueRun, error) {
	res := queueRun{Runtime: c.runtime, Pods: c.pods, Mode: c.mode, Run: c.run, Goroutines: -1}
	dir, err := os.MkdirTemp(root, "case-")
	if err != nil {
		return res, err
	}
	defer os.RemoveAll(dir)
	progress("%s: starting", label)
	endpoint, rt, stopRuntime, err := s.startRuntime(ctx, c.runtime, dir)
	if err != nil {
		return res, err
	}
	defer stopRuntime()
	k := key(podline, c.mode, c.runtime, c.pods)
	a, err := startPodline(ctx, s.podline, dir, endpoint, k)
	if err != nil {
		return res, err
	}
	defer release(a, label)
	settle := queueSettle
	if s.cfg.quick {
		settle = s.settle()
	}
	if err := sleep(ctx, settle); err != nil {
		return res, err
	}
	d, err := density(ctx, a, rt, k, newPodWriter(a.manifests()), label)
	if err != nil {
		return res, err
	}
	res.StartSec, res.CPUSec, res.PollCPUSec, res.RuntimeCPUSec = d.AllRunningSec, d.CPUSec, d.PollCPUSec, d.RuntimeCPUSec
	res.StartupP50Ms, res.StartupP99Ms = d.Startup.P50, d.Startup.P99
	m, err := readMetrics(ctx, a)
	if err != nil {
		return res, fmt.Errorf("podline /metrics: %w", err)
	}
	res.fromMetrics(m)
	progress("%s: queue wait %.2f ms/pod, %g parked hand-offs", label, res.waitPerPodMs(), res.QueueWaits)
	if a.exited() {
		return res, a.errExited()
	}
	return res, nil
}

// fromMetrics fills the stage figures from one scrape.
func (r *queueRun) fromMetrics(m *scrape) {
	r.QueueWaits = m.samples["podline_pipeline_queue_waits_total"]
	r.Passes = m.samples["podline_pipeline_passes_total"]
	if g, ok := m.samples["go_goroutines"]; ok {
		r.Goroutines = int(g)
	}
	if n := m.samples["podline_pod_start_duration_seconds_count"]; n > 0 {
		r.PodStartMeanMs = m.samples["podline_pod_start_duration_seconds_sum"] / n * 1000
	}
	r.Stages = nil
	for id := pstages.StageID(0); id < pstages.NumStages; id++ {
		lbl := `{stage="` + id.String() + `"}`
		wait := m.hist["podline_stage_queue_wait_seconds"+lbl].quantiles()
		work := m.hist["podline_stage_duration_seconds"+lbl]
		r.Stages = append(r.Stages, queueStage{
			Name:       id.String(),
			Workers:    pstages.DefaultWorkers[id],
			Passes:     int(m.samples["podline_stage_duration_seconds_count"+lbl]),
			WaitSumSec: m.samples["podline_stage_queue_wait_seconds_sum"+lbl],
			WaitP50Ms:  wait.P50,
			WaitP99Ms:  wait.P99,
			WorkSumSec: m.samples["podline_stage_duration_seconds_sum"+lbl],
			WorkP50Ms:  work.quantiles().P50,
			Depth:      m.samples["podline_stage_queue_depth"+lbl],
		})
	}
}

// queueKey groups runs of one runtime, pod count and mode.
type queueKey struct {
	runtime string
	pods    int
	mode    string
}

func queueMarkdown(run *result.Run, quick, tmpfs bool, runs []queueRun, failed []string) string {
	var b strings.Builder
	b.WriteString("# queue: lock-free stage queues against a buffered channel\n\n")
	fmt.Fprintf(&b, "- machine: %s, %d CPUs, kernel %s\n- podline: %s\n", run.Machine.Hostname, run.Machine.CPUs, run.Machine.Kernel, run.Podline)
	if quick {
		b.WriteString("- **quick run**: small N, a smoke run, not a measurement\n")
	}
	if tmpfs {
		b.WriteString("- **run directories on a tmpfs** mounted for the scenario (podline's root and log dirs, the manifests, the fake CRI's socket): the disk's slowing file creation after big deletes is out of the measurement, for both modes alike\n")
	} else {
		b.WriteString("- run directories on the disk (-queue-tmpfs=false)\n")
	}
	fmt.Fprintf(&b, "- each run: a fresh fake CRI and a fresh podline (default flags; `queue=channel` adds --queue=channel), left alone %s, then N host-network BestEffort pods written at once into its static pod directory. At each runtime and N the modes alternate run by run (lock-free, channel, lock-free, ...)\n", queueSettle)
	b.WriteString("- start: manifests written → every pod seen Running in /pods (polled every max(50 ms, N × 0.1 ms)). Agent CPU: utime+stime over that span, the polls included\n")
	b.WriteString("- from podline's /metrics after the start: queue wait per pod = Σ over stages of podline_stage_queue_wait_seconds_sum / N (a first start crosses 5 queues; status passes from runtime events add theirs); parked = podline_pipeline_queue_waits_total, hand-offs a stage queue refused although the window left room, so the producer parked; work = podline_stage_duration_seconds. Busy = a stage's work sum / start time: the mean number of its workers busy over the start; queued = its queue wait sum / start time, the mean number of passes waiting in its queue (Little's law)\n")
	fmt.Fprintf(&b, "- stage workers (stages.DefaultWorkers): admit %d, volumes %d, sandbox %d, containers %d, status %d; window 1024\n\n",
		pstages.DefaultWorkers[pstages.StageAdmit], pstages.DefaultWorkers[pstages.StageVolumes], pstages.DefaultWorkers[pstages.StageSandbox],
		pstages.DefaultWorkers[pstages.StageContainers], pstages.DefaultWorkers[pstages.StageStatus])

	keys, by := groupBy(runs, func(r queueRun) queueKey { return queueKey{r.Runtime, r.Pods, r.Mode} })
	f := func(rs []queueRun, get func(queueRun) float64, prec int) string { return medOrDash(of(rs, get), prec) }

	b.WriteString("## Start, medians (min–max over runs)\n\n")
	b.WriteString("| runtime | pods | queue | runs | all Running s | agent CPU s | polls CPU s | fake CRI CPU s | startup p50 ms | startup p99 ms | podline pod start mean ms | queue wait ms/pod | share of pod start in queues | parked hand-offs | lock-free / channel, time | lock-free / channel, CPU |\n")
	b.WriteString("| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	for _, k := range keys {
		rs := by[k]
		ratioT, ratioC := "–", "–"
		if k.mode == result.ModeDefault {
			if ch, ok := by[queueKey{k.runtime, k.pods, result.ModeQueueChannel}]; ok {
				ratioT = medianRatio(rs, ch, func(r queueRun) float64 { return r.StartSec })
				ratioC = medianRatio(rs, ch, func(r queueRun) float64 { return r.CPUSec })
			}
		}
		fmt.Fprintf(&b, "| %s | %d | %s | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n",
			k.runtime, k.pods, queueName(k.mode), len(rs),
			f(rs, func(r queueRun) float64 { return r.StartSec }, 2),
			f(rs, func(r queueRun) float64 { return r.CPUSec }, 2),
			f(rs, func(r queueRun) float64 { return r.PollCPUSec }, 2),
			f(rs, func(r queueRun) float64 { return r.RuntimeCPUSec }, 2),
			f(rs, func(r queueRun) float64 { return r.StartupP50Ms }, 0),
			f(rs, func(r queueRun) float64 { return r.StartupP99Ms }, 0),
			f(rs, func(r queueRun) float64 { return r.PodStartMeanMs }, 1),
			f(rs, func(r queueRun) float64 { return r.waitPerPodMs() }, 2),
			f(rs, func(r queueRun) float64 { return 100 * r.waitPerPodMs() / r.PodStartMeanMs }, 1)+" %",
			f(rs, func(r queueRun) float64 { return r.QueueWaits }, 0),
			ratioT, ratioC)
	}

	b.WriteString("\n## Stages, medians (min–max over runs)\n\n")
	b.WriteString("| runtime | pods | queue | stage | workers | passes | queue wait p50 ms | queue wait p99 ms | queue wait mean ms | queued (mean) | work p50 ms | work mean ms | busy workers (mean) |\n")
	b.WriteString("| --- | ---: | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	for _, k := range keys {
		rs := by[k]
		for id := pstages.StageID(0); id < pstages.NumStages; id++ {
			name := id.String()
			g := func(get func(queueStage, queueRun) float64, prec int) string {
				return f(rs, func(r queueRun) float64 { return get(r.stage(name), r) }, prec)
			}
			fmt.Fprintf(&b, "| %s | %d | %s | %s | %d | %s | %s | %s | %s | %s | %s | %s | %s |\n",
				k.runtime, k.pods, queueName(k.mode), name, pstages.DefaultWorkers[id],
				g(func(st queueStage, _ queueRun) float64 { return float64(st.Passes) }, 0),
				g(func(st queueStage, _ queueRun) float64 { return st.WaitP50Ms }, 3),
				g(func(st queueStage, _ queueRun) float64 { return st.WaitP99Ms }, 2),
				g(func(st queueStage, _ queueRun) float64 { return perPass(st.WaitSumSec, st.Passes) }, 3),
				g(func(st queueStage, r queueRun) float64 { return st.WaitSumSec / r.StartSec }, 2),
				g(func(st queueStage, _ queueRun) float64 { return st.WorkP50Ms }, 3),
				g(func(st queueStage, _ queueRun) float64 { return perPass(st.WorkSumSec, st.Passes) }, 3),
				g(func(st queueStage, r queueRun) float64 { return st.WorkSumSec / r.StartSec }, 2))
		}
	}

	b.WriteString("\n## Every run, in the order run\n\n")
	b.WriteString("| runtime | pods | queue | run | all Running s | agent CPU s | startup p50 ms | p99 ms | queue wait ms/pod | parked | passes | goroutines |\n")
	b.WriteString("| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	for _, r := range runs {
		fmt.Fprintf(&b, "| %s | %d | %s | %d | %.2f | %.2f | %.0f | %.0f | %.2f | %.0f | %.0f | %d |\n",
			r.Runtime, r.Pods, queueName(r.Mode), r.Run, r.StartSec, r.CPUSec, r.StartupP50Ms, r.StartupP99Ms,
			r.waitPerPodMs(), r.QueueWaits, r.Passes, r.Goroutines)
	}
	if len(failed) > 0 {
		b.WriteString("\n## Failed runs\n\n")
		for _, f := range failed {
			fmt.Fprintf(&b, "- %s\n", oneLine(f))
		}
	}
	return b.String()
}

// queueName is the mode as the report names the queue.
func queueName(mode string) string {
	if mode == result.ModeQueueChannel {
		return "channel"
	}
	return "lock-free"
}

// perPass is sum in seconds over n passes, in ms.
func perPass(sumSec float64, n int) float64 {
	if n == 0 {
		return 0
	}
	return sumSec * 1000 / float64(n)
}

// medianRatio is the median of a over the median of b, as ×r.
func medianRatio(a, b []queueRun, get func(queueRun) float64) string {
	ma, _, _ := median(of(a, get))
	mb, _, _ := median(of(b, get))
	if mb == 0 {
		return "–"
	}
	return fmt.Sprintf("×%.2f", ma/mb)
}

// queueFlagsErr checks the queue flags that parsing cannot.
func queueFlagsErr(c *config) error {
	if c.queueRuns < 1 {
		return fmt.Errorf("-queue-runs: %d is not a number of runs", c.queueRuns)
	}
	for _, rt := range splitList(c.queueRuntimes) {
		if !slices.Contains([]string{fakeZ, fakeC}, rt) {
			return fmt.Errorf("-queue-runtimes: unknown runtime %q (known: %s,%s)", rt, fakeZ, fakeC)
		}
	}
	_, err := queuePlan(c)
	return err
}
