// Command eventplane measures podline's event plane against the real
// containerd + runc harness, side by side with the one-second relist:
// how soon a container's exit shows in /pods, and what podline and
// containerd cost while N pods sit idle.
//
// It runs podline binaries of its own, each with temporary directories,
// the cgroup root /podline-bench and pods whose names start with "evb-".
// It must not touch pods, cgroups or processes it did not create: the
// harness containerd may be shared with other users.
//
// Run it as root after `scripts/runtime.sh up`, in bench/ (a module of
// its own):
//
//	go run ./eventplane -out results/$(date +%F)-$(hostname)/eventplane.json
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/podline/podline/bench/internal/repo"
)

// config is everything the flags decide.
type config struct {
	podline     string // podline binary; built from the repository when empty
	endpoint    string
	modes       []string
	exitPods    int
	idlePods    []int
	idleWindow  time.Duration
	settle      time.Duration
	killGap     time.Duration
	killJitter  time.Duration
	pollSleep   time.Duration
	out         string
	repo        string
	cgroupRoot  string
	containerdP string // containerd's pid file
	rerender    string
}

func parseFlags(args []string) (*config, error) {
	c := &config{cgroupRoot: "/podline-bench"}
	fs := flag.NewFlagSet("eventplane", flag.ContinueOnError)
	fs.StringVar(&c.podline, "podline", "", "podline binary to measure; default: `go build` of ./cmd/podline in the repository")
	fs.StringVar(&c.endpoint, "endpoint", "", "CRI endpoint; default $CONTAINER_RUNTIME_ENDPOINT or the harness containerd's socket ($PODLINE_RUN, /run/podline-dev)")
	modes := fs.String("modes", "events,relist", "podline --pleg modes to compare, in order")
	fs.IntVar(&c.exitPods, "exit-pods", 40, "K: pods whose main process is killed, one at a time, per mode")
	idle := fs.String("idle-pods", "30,100", "N: running pod counts at which idle cost is measured")
	fs.DurationVar(&c.idleWindow, "idle-window", 30*time.Second, "idle measurement window")
	fs.DurationVar(&c.settle, "settle", 5*time.Second, "wait after all pods are Running before the idle window")
	fs.DurationVar(&c.killGap, "kill-gap", 100*time.Millisecond, "least wait after a detected exit before the next kill")
	fs.DurationVar(&c.killJitter, "kill-jitter", time.Second, "random extra wait before each kill, uniform in [0, this), so kills fall at every phase of the relist clock")
	fs.DurationVar(&c.pollSleep, "poll-sleep", 0, "sleep between /pods polls while waiting for an exit (0: back to back)")
	fs.StringVar(&c.out, "out", "", "JSON results file (the Markdown table goes next to it, .md); default bench/results/<date>-<hostname>/eventplane.json (eventplane-quick.json with -quick)")
	fs.StringVar(&c.repo, "repo", "", "podline repository; default: the module around the working directory")
	fs.StringVar(&c.containerdP, "containerd-pid-file", repo.HarnessPidFile(), "pid file of the harness containerd")
	fs.StringVar(&c.rerender, "rerender", "", "only rewrite the Markdown next to this results JSON from it (no measurement)")
	quick := fs.Bool("quick", false, "short run: -exit-pods=10 -idle-pods=10 -idle-window=5s unless given")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if *quick {
		if !set["exit-pods"] {
			c.exitPods = 10
		}
		if !set["idle-pods"] {
			*idle = "10"
		}
		if !set["idle-window"] {
			c.idleWindow = 5 * time.Second
		}
	}
	for _, m := range strings.Split(*modes, ",") {
		if m != "events" && m != "relist" {
			return nil, fmt.Errorf("-modes: %q is not events or relist", m)
		}
		c.modes = append(c.modes, m)
	}
	for _, s := range strings.Split(*idle, ",") {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			return nil, fmt.Errorf("-idle-pods: %q is not a pod count", s)
		}
		c.idlePods = append(c.idlePods, n)
	}
	if c.exitPods < 0 || c.idleWindow <= 0 || c.killGap < 0 || c.killJitter < 0 {
		return nil, fmt.Errorf("-exit-pods, -idle-window, -kill-gap and -kill-jitter must not be negative")
	}
	if c.endpoint == "" {
		c.endpoint = os.Getenv("CONTAINER_RUNTIME_ENDPOINT")
	}
	if c.endpoint == "" {
		c.endpoint = "unix://" + repo.HarnessSocket()
	}
	if c.repo == "" {
		var err error
		if c.repo, err = repo.Find(); err != nil {
			return nil, err
		}
	}
	if c.out == "" {
		host, _ := os.Hostname()
		name := "eventplane.json"
		if *quick {
			// A smoke run never overwrites the day's full results.
			name = "eventplane-quick.json"
		}
		c.out = filepath.Join(c.repo, "bench", "results", time.Now().Format("2006-01-02")+"-"+host, name)
	}
	return c, nil
}

func main() {
	c, err := parseFlags(os.Args[1:])
	if err != nil {
		if err == flag.ErrHelp {
			os.Exit(0)
		}
		fmt.Fprintln(os.Stderr, "eventplane:", err)
		os.Exit(2)
	}
	if c.rerender != "" {
		if err := rerender(c.rerender); err != nil {
			fmt.Fprintln(os.Stderr, "eventplane:", err)
			os.Exit(1)
		}
		return
	}
	if os.Geteuid() != 0 {
		fmt.Fprintln(os.Stderr, "eventplane: must run as root (it runs podline, which drives containerd and cgroups)")
		os.Exit(1)
	}
	// A signal ends the current wait; teardown still runs, so an
	// interrupted run leaves no pods behind.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, c); err != nil {
		fmt.Fprintln(os.Stderr, "eventplane:", err)
		os.Exit(1)
	}
}
