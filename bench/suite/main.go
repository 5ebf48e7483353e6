// Command suite is podline's density and latency benchmark suite: pods
// handed to an agent through its static pod directory, against the fake
// CRI (cmd/fakecri) or the real containerd of the test harness, watched
// through the read-only /pods. It runs podline in its default shape and in
// ablations, and the upstream kubelet in standalone mode beside it, then
// writes suite.json, suite.md and plots.
//
// Every agent it runs gets temporary directories, its own cgroup root
// (/podline-bench-*) and pods named "bench-*"; it must not touch pods,
// cgroups or processes it did not create.
//
// As root, in bench/ (a module of its own, so that its plotting
// dependencies stay out of the agent's module graph):
//
//	go run ./suite              # the full run (make bench)
//	go run ./suite -quick       # small N, one pass of each scenario
//	go run ./suite -scenarios probes -out results/<dir>
//	go run ./suite -scenarios scale -out results/<dir>
//	go run ./suite -scenarios cluster -out results/<dir>
//	go run ./suite -scenarios queue -out results/<dir>
//	go run ./suite -scenarios reliability   # kill -9, hanging and slow runtime (make reliability)
//	go run ./suite -render results/<dir>/suite.json
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/podline/podline/bench/internal/repo"
	"github.com/podline/podline/bench/internal/report"
)

// config is everything the flags decide.
type config struct {
	quick       bool
	out         string
	repo        string
	scenarios   map[string]bool
	kubelet     string // kubelet binary; built by scripts/install-kube.sh when empty
	endpoint    string // the harness containerd, for the real scenario
	containerdP string
	render      string
	idleWindow  time.Duration
	probeWindow time.Duration
	probeRuns   int
	probePods   int
	probeAgents string
	scaleRuns   int
	scalePods   int
	scaleEvents string // fakecri --events: how the runtime's event stream answers
	realRuns    int
	realPods    int
	realRate    float64
	realAgents  string
	// cluster: N pods through the API server of scripts/controlplane.sh
	clusterRuns   int
	clusterPods   int
	clusterAgents string
	clusterShapes string
	// queue: lock-free stage queues against --queue=channel
	queueRuns     int
	queuePods     string
	queueRuntimes string
	queueCases    string
	queueTmpfs    bool
	// reliability: faults (kill -9, a hanging or slow runtime) and the
	// invariants that must hold through them
	relRuns  int
	relOther int // runs of the cases other than the kill -9 ones
	relPods  int
	relCases string
}

var allScenarios = []string{"density", "idle", "churn", "real", "ablations", "kubelet", "probes", "serve", "scale"}

// optInScenarios run only when -scenarios names them: cluster needs the
// control plane built and takes long, which neither make bench nor a
// quick run should wait for; queue is a study of one design choice with
// many runs each; reliability injects faults and checks invariants, a
// suite of its own (make reliability).
var optInScenarios = []string{"cluster", "queue", "reliability"}

func parseFlags(args []string) (*config, error) {
	c := &config{}
	fs := flag.NewFlagSet("suite", flag.ContinueOnError)
	fs.BoolVar(&c.quick, "quick", false, "small N and short windows: a smoke run, not a measurement")
	fs.StringVar(&c.out, "out", "", "results directory (default bench/results/<date>-<hostname>, or a temporary one with -quick)")
	fs.StringVar(&c.repo, "repo", "", "the podline repository, to build the binaries from (default: the root module around the working directory)")
	known := append(slices.Clone(allScenarios), optInScenarios...)
	only := fs.String("scenarios", strings.Join(allScenarios, ","), "scenarios to run: "+strings.Join(known, ",")+" (cluster only when named)")
	fs.StringVar(&c.kubelet, "kubelet", "", "upstream kubelet binary (default: built and cached by scripts/install-kube.sh)")
	fs.StringVar(&c.endpoint, "containerd-endpoint", repo.HarnessSocket(), "the harness containerd, for the real scenario")
	fs.StringVar(&c.containerdP, "containerd-pid-file", repo.HarnessPidFile(), "pid file of the harness containerd")
	fs.StringVar(&c.render, "render", "", "re-render the report and plots of a stored suite.json and exit")
	fs.DurationVar(&c.idleWindow, "idle-window", 0, "idle measurement window (default 60s, 5s with -quick)")
	fs.DurationVar(&c.probeWindow, "probe-window", 0, "probes: steady-state window (default 60s, 5s with -quick)")
	fs.IntVar(&c.probeRuns, "probe-runs", 3, "probes: runs of each podline case (the kubelet's: this minus 2, at least 1)")
	fs.StringVar(&c.probeAgents, "probe-agents", "", "probes: agents to run (default podline,kubelet; podline alone with -quick, a smoke run that must not wait on the kubelet's probes)")
	fs.IntVar(&c.probePods, "probe-pods", 0, "probes: run only the cases with this many pods (default all)")
	fs.IntVar(&c.realRuns, "real-runs", 3, "real: runs of each agent and containerd configuration per shape, interleaved (1 with -quick)")
	fs.IntVar(&c.realPods, "real-pods", 0, "real: run only the shapes with this many pods (default all)")
	fs.Float64Var(&c.realRate, "real-rate", -1, "real: run only the shapes with this arrival rate in pods/s, 0 for all at once (default all)")
	fs.StringVar(&c.realAgents, "real-agents", "", "real: run only these of agent[:mode]@config, comma-separated, e.g. 'podline@podline,podline:start-concurrency=0@podline' (default all)")
	fs.IntVar(&c.scaleRuns, "scale-runs", 0, "scale: runs of each pod count, one per pass over them all (default 3, 1 with -quick)")
	fs.IntVar(&c.scalePods, "scale-pods", -1, "scale: run only the cases with this many pods, 0 included (default all)")
	fs.StringVar(&c.scaleEvents, "scale-events", "stream", "scale: the fake CRI's container event stream: stream, end (ends as soon as it opens, as k8s.io/cri-client's fake runtime's) or unimplemented (as containerd 1.6)")
	fs.IntVar(&c.clusterRuns, "cluster-runs", 0, "cluster: rounds, each running every agent once (default 3, 1 with -quick)")
	fs.IntVar(&c.clusterPods, "cluster-pods", 0, "cluster: pods per run (default 1000, 50 with -quick)")
	fs.StringVar(&c.clusterAgents, "cluster-agents", "podline,kubelet", "cluster: agents to run, comma-separated")
	fs.StringVar(&c.clusterShapes, "cluster-shapes", shapeMixed, "cluster: shapes to run: mixed (a Deployment of N/2 through the scheduler, N/2 bare pods with spec.nodeName), bare (all N with spec.nodeName)")
	fs.IntVar(&c.queueRuns, "queue-runs", 0, "queue: runs of each mode per runtime and pod count, the modes alternating (default 5, 1 with -quick)")
	fs.StringVar(&c.queuePods, "queue-pods", "", "queue: pod counts, comma-separated (default 100,1000,10000; 50,200 with -quick)")
	fs.StringVar(&c.queueRuntimes, "queue-runtimes", fakeZ+","+fakeC, "queue: fake CRI profiles, comma-separated")
	fs.StringVar(&c.queueCases, "queue-cases", "", "queue: runtime:pods pairs to run instead of every runtime × pod count, e.g. 'fake-zero:10000,fake-containerd:1000'")
	fs.IntVar(&c.relRuns, "reliability-runs", 0, "reliability: runs of each case (default 3, 1 with -quick)")
	fs.IntVar(&c.relOther, "reliability-fault-runs", 0, "reliability: runs of the hang, slow and containerd cases (default -reliability-runs)")
	fs.IntVar(&c.relPods, "reliability-pods", 0, "reliability: pods of the kill -9 cases (default 1000, 100 with -quick)")
	fs.StringVar(&c.relCases, "reliability-cases", "", "reliability: cases to run, comma-separated names or kinds (kill, teardown, idle, hang, slow; default all)")
	fs.BoolVar(&c.queueTmpfs, "queue-tmpfs", true, "queue: put the runs' directories on a tmpfs mounted for the scenario")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if c.repo == "" {
		var err error
		if c.repo, err = repo.Find(); err != nil {
			return nil, err
		}
	}
	c.scenarios = map[string]bool{}
	for _, s := range strings.Split(*only, ",") {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		if !slices.Contains(known, s) {
			return nil, fmt.Errorf("-scenarios: unknown scenario %q (known: %s)", s, strings.Join(known, ","))
		}
		c.scenarios[s] = true
	}
	orDefault(&c.idleWindow, c.quick, 60*time.Second, 5*time.Second)
	orDefault(&c.probeAgents, c.quick, "podline,kubelet", "podline")
	orDefault(&c.scaleRuns, c.quick, 3, 1)
	orDefault(&c.clusterRuns, c.quick, 3, 1)
	orDefault(&c.clusterPods, c.quick, 1000, 50)
	orDefault(&c.queueRuns, c.quick, 5, 1)
	orDefault(&c.relRuns, c.quick, 3, 1)
	orDefault(&c.relOther, c.quick, c.relRuns, 1)
	if c.scenarios["queue"] {
		if err := queueFlagsErr(c); err != nil {
			return nil, err
		}
	}
	if c.clusterRuns < 0 || c.clusterPods < 0 {
		return nil, fmt.Errorf("-cluster-runs %d, -cluster-pods %d: not counts", c.clusterRuns, c.clusterPods)
	}
	for _, sh := range splitList(c.clusterShapes) {
		if !slices.Contains(clusterShapes, sh) {
			return nil, fmt.Errorf("-cluster-shapes: unknown shape %q (known: %s)", sh, strings.Join(clusterShapes, ","))
		}
	}
	for _, a := range splitList(c.clusterAgents) {
		if a != podline && a != kubelet {
			return nil, fmt.Errorf("-cluster-agents: unknown agent %q (known: podline,kubelet)", a)
		}
	}
	if c.realRuns < 1 {
		return nil, fmt.Errorf("-real-runs: %d is not a number of runs", c.realRuns)
	}
	if c.scaleRuns < 0 {
		return nil, fmt.Errorf("-scale-runs: %d is not a number of runs", c.scaleRuns)
	}
	orDefault(&c.probeWindow, c.quick, 60*time.Second, 5*time.Second)
	return c, nil
}

func main() {
	cfg, err := parseFlags(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "suite:", err)
		os.Exit(2)
	}
	if cfg.render != "" {
		if err := rerender(cfg.render); err != nil {
			fmt.Fprintln(os.Stderr, "suite:", err)
			os.Exit(1)
		}
		return
	}
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	if err := run(ctx, cfg); err != nil {
		fmt.Fprintln(os.Stderr, "suite:", err)
		os.Exit(1)
	}
}

func rerender(path string) error {
	r, err := report.ReadJSON(path)
	if err != nil {
		return err
	}
	// Ratios follow from the measurements: recomputed, so a stored run
	// gains the ratios added since.
	r.Ratios = ratios(r)
	return report.WriteFiles(filepath.Dir(path), r)
}

// progress prints one timestamped line.
func progress(format string, args ...any) {
	fmt.Printf("%s  %s\n", time.Now().Format("15:04:05.000"), fmt.Sprintf(format, args...))
}

// orDefault sets a flag left at its zero value to its default: full for a
// measurement, quick for a -quick smoke run.
func orDefault[T comparable](v *T, quick bool, full, quickV T) {
	var zero T
	if *v != zero {
		return
	}
	*v = full
	if quick {
		*v = quickV
	}
}
