package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/podline/podline/bench/internal/procstat"
	"github.com/podline/podline/bench/internal/report"
	"github.com/podline/podline/bench/internal/result"
)

// suite holds what every case shares.
type suite struct {
	cfg     *config
	tmp     string
	podline string // binaries
	fakecri string
	kubelet string
	run     *result.Run
}

func run(ctx context.Context, cfg *config) error {
	if os.Geteuid() != 0 {
		return errors.New("the suite runs as root: agents create cgroups and the real case runs containers")
	}
	tmp, err := os.MkdirTemp("", "podline-suite-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	s := &suite{cfg: cfg, tmp: tmp, run: &result.Run{Started: time.Now().UTC(), Quick: cfg.quick, Machine: machine()}}
	if err := s.build(ctx); err != nil {
		return err
	}
	s.run.Latency = fakeLatency()
	for i, c := range plan(cfg.quick) {
		if !cfg.scenarios[c.scenario] || (c.key.Agent == kubelet && s.kubelet == "") {
			continue
		}
		if c.idle && !cfg.scenarios["idle"] {
			c.idle = false
		}
		if c.churn != nil && !cfg.scenarios["churn"] {
			c.churn = nil
		}
		label := fmt.Sprintf("[%d] %s %s %s %d", i+1, label(c.key), c.key.Runtime, "pods:", c.key.Pods)
		if err := s.runCase(ctx, c, label); err != nil {
			if ctx.Err() != nil {
				return fmt.Errorf("interrupted: %s: %w", label, err)
			}
			progress("%s: FAILED: %v", label, err)
			s.run.Warnings = append(s.run.Warnings, fmt.Sprintf("%s %s %s %d pods: %v", c.key.Agent, c.key.Mode, c.key.Runtime, c.key.Pods, err))
		}
	}
	out := cfg.out
	if out == "" {
		out = filepath.Join(cfg.repo, "bench", "results", time.Now().Format("2006-01-02")+"-"+s.run.Machine.Hostname)
		if cfg.quick {
			out = filepath.Join(tmp, "results")
		}
	}
	var probesErr error
	if cfg.scenarios["real"] {
		if probesErr = s.realScenario(ctx, out); probesErr != nil && ctx.Err() != nil {
			return probesErr
		}
	}
	if cfg.scenarios["probes"] {
		if err := s.probesScenario(ctx, out); err != nil {
			if ctx.Err() != nil {
				return err
			}
			probesErr = errors.Join(probesErr, err)
		}
	}
	if cfg.scenarios["serve"] {
		if err := s.serveScenario(ctx, out); err != nil {
			if ctx.Err() != nil {
				return err
			}
			probesErr = errors.Join(probesErr, err)
		}
	}
	if cfg.scenarios["scale"] {
		if err := s.scaleScenario(ctx, out); err != nil {
			if ctx.Err() != nil {
				return err
			}
			probesErr = errors.Join(probesErr, err)
		}
	}
	if cfg.scenarios["cluster"] {
		if err := s.clusterScenario(ctx, out); err != nil {
			if ctx.Err() != nil {
				return err
			}
			probesErr = errors.Join(probesErr, err)
		}
	}
	if cfg.scenarios["queue"] {
		if err := s.queueScenario(ctx, out); err != nil {
			if ctx.Err() != nil {
				return err
			}
			probesErr = errors.Join(probesErr, err)
		}
	}
	if cfg.scenarios["reliability"] {
		if err := s.reliabilityScenario(ctx, out); err != nil {
			if ctx.Err() != nil {
				return err
			}
			probesErr = errors.Join(probesErr, err)
		}
	}
	s.run.Ratios = ratios(s.run)
	s.run.Seconds = time.Since(s.run.Started).Seconds()
	if len(s.run.Density) == 0 && len(s.run.Warnings) == 0 && (cfg.scenarios["real"] || cfg.scenarios["probes"] || cfg.scenarios["serve"] || cfg.scenarios["scale"] || cfg.scenarios["cluster"] || cfg.scenarios["queue"] || cfg.scenarios["reliability"]) {
		// Only the real, probes, serve, scale, cluster or queue scenarios ran: no
		// suite.md to write over.
		return probesErr
	}
	if probesErr != nil {
		s.run.Warnings = append(s.run.Warnings, probesErr.Error())
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	if err := report.WriteFiles(out, s.run); err != nil {
		return err
	}
	fmt.Println(report.Markdown(s.run))
	progress("results in %s (%.0fs)", out, s.run.Seconds)
	if len(s.run.Warnings) > 0 {
		return fmt.Errorf("%d case(s) failed: %s", len(s.run.Warnings), strings.Join(s.run.Warnings, "; "))
	}
	return nil
}

// build compiles podline and the fake CRI from the repository, and finds
// (or builds) the upstream kubelet when a kubelet case is selected.
func (s *suite) build(ctx context.Context) error {
	s.podline = filepath.Join(s.tmp, "podline")
	s.fakecri = filepath.Join(s.tmp, "fakecri")
	for bin, pkg := range map[string]string{s.podline: "./cmd/podline", s.fakecri: "./cmd/fakecri"} {
		progress("building %s", pkg)
		cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, pkg)
		cmd.Dir, cmd.Stdout, cmd.Stderr = s.cfg.repo, os.Stdout, os.Stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("build %s: %w", pkg, err)
		}
	}
	if out, err := exec.CommandContext(ctx, s.podline, "--version").Output(); err == nil {
		s.run.Podline = strings.TrimSpace(string(out))
	}
	if out, err := exec.CommandContext(ctx, "git", "-C", s.cfg.repo, "describe", "--always", "--dirty").Output(); err == nil {
		s.run.Podline = strings.TrimSpace(s.run.Podline + " (" + strings.TrimSpace(string(out)) + ")")
	}
	if !s.cfg.scenarios["kubelet"] && !s.cfg.scenarios["serve"] && !s.cfg.scenarios["real"] && !(s.cfg.scenarios["probes"] && strings.Contains(s.cfg.probeAgents, kubelet)) &&
		!(s.cfg.scenarios["cluster"] && strings.Contains(s.cfg.clusterAgents, kubelet)) {
		return nil
	}
	s.kubelet = s.cfg.kubelet
	if s.kubelet == "" {
		// A quick run takes the kubelet only when it is already built:
		// a smoke run must not wait minutes for a build that only a
		// measurement needs.
		args := []string{"kubelet"}
		if s.cfg.quick {
			args = []string{"--if-built", "kubelet"}
		} else {
			progress("building the upstream kubelet (cached after the first time)")
		}
		cmd := exec.CommandContext(ctx, filepath.Join(s.cfg.repo, "scripts", "install-kube.sh"), args...)
		cmd.Dir, cmd.Stderr = s.cfg.repo, os.Stderr
		out, err := cmd.Output()
		var exit *exec.ExitError
		if s.cfg.quick && errors.As(err, &exit) && exit.ExitCode() == 3 {
			progress("the kubelet is not built: its cases are skipped (make bench builds it)")
			return nil
		}
		if err != nil {
			return fmt.Errorf("scripts/install-kube.sh %s: %w", strings.Join(args, " "), err)
		}
		s.kubelet = filepath.Join(strings.TrimSpace(lastLine(string(out))), "kubelet")
	}
	s.run.Kubelet = kubeletVersion(s.kubelet)
	return nil
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return lines[len(lines)-1]
}

// runCase runs one agent from start to stop and adds its results.
func (s *suite) runCase(ctx context.Context, c caseSpec, label string) error {
	dir, err := os.MkdirTemp(s.tmp, "case-")
	if err != nil {
		return err
	}
	progress("%s: starting", label)
	endpoint, rt, stopRuntime, err := s.startRuntime(ctx, c.key.Runtime, dir)
	if err != nil {
		return err
	}
	defer stopRuntime()
	a, err := s.startAgent(ctx, c.key, dir, endpoint)
	if err != nil {
		return err
	}
	// Pods come once the agent has finished starting: the kubelet keeps
	// initialising (cAdvisor, managers) for seconds after it serves /pods.
	if err := sleep(ctx, s.settle()); err != nil {
		return err
	}
	w := newPodWriter(a.manifests())
	defer release(a, label)
	d, err := density(ctx, a, rt, c.key, w, label)
	if err != nil {
		return err
	}
	if c.key.Agent == podline {
		if m, err := readMetrics(ctx, a); err == nil {
			d.Stages = stages(m)
			d.Goroutines = int(m.samples["go_goroutines"])
		}
	}
	s.run.Density = append(s.run.Density, d)
	if c.idle {
		i, err := idle(ctx, a, rt, c.key, s.settle(), s.cfg.idleWindow, label)
		if err != nil {
			return err
		}
		s.run.Idle = append(s.run.Idle, i)
	}
	if c.churn != nil {
		ch, err := churn(ctx, a, c.key, w, *c.churn, label)
		if err != nil {
			return err
		}
		s.run.Churn = append(s.run.Churn, ch)
	}
	return nil
}

// startRuntime starts a fresh fake CRI and returns its endpoint and CPU
// meter.
func (s *suite) startRuntime(ctx context.Context, runtime, dir string) (string, runtimeCPU, func(), error) {
	f, err := startFakeCRI(ctx, s.fakecri, dir, runtime)
	if err != nil {
		return "", nil, nil, err
	}
	rt := func() float64 {
		c, err := procstat.Read(f.pid(), false)
		if err != nil {
			return 0
		}
		return c.CPUSeconds()
	}
	return "unix://" + f.socket, rt, func() { f.stop(5 * time.Second) }, nil
}

func (s *suite) startAgent(ctx context.Context, k result.Key, dir, endpoint string) (agent, error) {
	if k.Agent == kubelet {
		return startKubelet(ctx, s.kubelet, dir, endpoint, k)
	}
	return startPodline(ctx, s.podline, dir, endpoint, k)
}

func readPID(path string) (int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return 0, fmt.Errorf("%s: %w", path, err)
	}
	if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); err != nil {
		return 0, fmt.Errorf("%s: process %d is gone", path, pid)
	}
	return pid, nil
}

// settle is how long an agent is left alone before a measurement.
func (s *suite) settle() time.Duration {
	if s.cfg.quick {
		return 2 * time.Second
	}
	return 10 * time.Second
}
