package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/podline/podline/bench/internal/observe"
)

// nodeName is the --hostname-override of every podline the bench runs;
// static pods are named <name>-<node>.
const nodeName = "bench"

// agent is one podline process with directories of its own.
type agent struct {
	label     string // scenario, for progress lines
	dir       string
	manifests string
	logPath   string
	url       string
	cmd       *exec.Cmd
	done      chan struct{}
	client    *observe.Client
}

// startAgent runs podline in one --pleg mode and waits until it serves
// /pods.
func (b *bench) startAgent(ctx context.Context, label, mode string) (*agent, error) {
	dir, err := os.MkdirTemp(b.tmp, strings.ReplaceAll(label, "/", "-")+"-")
	if err != nil {
		return nil, err
	}
	port, err := observe.FreePort()
	if err != nil {
		return nil, err
	}
	a := &agent{
		label:     label,
		dir:       dir,
		manifests: filepath.Join(dir, "manifests"),
		logPath:   filepath.Join(dir, "podline.log"),
		url:       fmt.Sprintf("http://127.0.0.1:%d", port),
		done:      make(chan struct{}),
		client:    observe.New(fmt.Sprintf("http://127.0.0.1:%d", port)),
	}
	if err := os.MkdirAll(a.manifests, 0o755); err != nil {
		return nil, err
	}
	logf, err := os.Create(a.logPath)
	if err != nil {
		return nil, err
	}
	defer logf.Close() // the child holds its own descriptor
	a.cmd = exec.Command(b.bin,
		"--pleg", mode,
		"--container-runtime-endpoint", b.cfg.endpoint,
		"--pod-manifest-path", a.manifests,
		"--root-dir", filepath.Join(dir, "root"),
		"--pod-logs-dir", filepath.Join(dir, "logs"),
		"--cgroup-root", b.cfg.cgroupRoot,
		"--hostname-override", nodeName,
		"--read-only-port", strconv.Itoa(port),
		"--address", "127.0.0.1",
		"--healthz-port", "0",
		"--port", "0",
	)
	a.cmd.Stdout, a.cmd.Stderr = logf, logf
	if err := a.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start podline: %w", err)
	}
	go func() { a.cmd.Wait(); close(a.done) }()
	deadline := time.Now().Add(20 * time.Second)
	for {
		if _, err := a.pods(ctx); err == nil {
			progress("%s: podline pid %d (--pleg=%s) serves %s/pods", label, a.cmd.Process.Pid, mode, a.url)
			return a, nil
		}
		select {
		case <-a.done:
			return nil, fmt.Errorf("podline exited at start; log: %s", a.logPath)
		case <-ctx.Done():
			a.stop()
			return nil, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			a.stop()
			return nil, fmt.Errorf("podline did not serve /pods in 20s; log: %s", a.logPath)
		}
	}
}

func (a *agent) pid() int { return a.cmd.Process.Pid }

// stop sends SIGTERM and waits; SIGKILL after 15 s. Pods keep running
// either way: teardown removes them first.
func (a *agent) stop() {
	a.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-a.done:
	case <-time.After(15 * time.Second):
		progress("%s: podline ignored SIGTERM for 15s, killing it", a.label)
		a.cmd.Process.Signal(syscall.SIGKILL)
		<-a.done
	}
	a.client.Close()
}

// metricPrefixes are the podline metrics kept with each scenario: what the
// event sources saw and what the safety relist found that they missed.
var metricPrefixes = []string{"podline_pleg_", "podline_ebpf_", "podline_cgroup_notif"}

// metrics reads podline's /metrics, keeping counters and gauges of the
// event plane (histogram buckets left out).
func (a *agent) metrics(ctx context.Context) (map[string]float64, error) {
	body, err := a.client.Metrics(ctx)
	if err != nil {
		return nil, err
	}
	defer body.Close()
	out := map[string]float64{}
	sc := bufio.NewScanner(body)
	for sc.Scan() {
		line := sc.Text()
		name, val, ok := strings.Cut(line, " ")
		if !ok || strings.Contains(name, "_bucket") || !hasAnyPrefix(name, metricPrefixes) {
			continue
		}
		if f, err := strconv.ParseFloat(val, 64); err == nil {
			out[name] = f
		}
	}
	return out, sc.Err()
}

func hasAnyPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// progress prints one timestamped line.
func progress(format string, args ...any) {
	fmt.Printf("%s  %s\n", time.Now().Format("15:04:05.000"), fmt.Sprintf(format, args...))
}

func (a *agent) pods(ctx context.Context) ([]observe.Pod, error) {
	pods, _, err := a.client.Pods(ctx)
	return pods, err
}

func (a *agent) poll(ctx context.Context) ([]observe.Pod, time.Time, error) {
	return a.client.Pods(ctx)
}
