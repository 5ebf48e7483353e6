package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/podline/podline/bench/internal/cgtree"
	"github.com/podline/podline/bench/internal/observe"
	"github.com/podline/podline/bench/internal/result"
)

// nodeName is the --hostname-override of every agent the suite runs;
// static pods are named <name>-<node>.
const nodeName = "bench"

// agent is one node agent under test, podline or the kubelet, seen the
// same way: a process, a manifest directory and a read-only port.
type agent interface {
	pid() int
	client() *observe.Client
	manifests() string
	exited() bool
	errExited() error
	// stop ends the process; cleanup then removes its cgroups and files.
	stop()
	cleanup() error
}

// release stops a and removes what it made; a cleanup that fails is
// reported under label and the run goes on.
func release(a agent, label string) {
	a.stop()
	if err := a.cleanup(); err != nil {
		progress("%s: cleanup: %v", label, err)
	}
}

// podlineAgent is a podline process with directories of its own.
type podlineAgent struct {
	*proc
	dir, manifestDir, cgroupRoot string
	c                            *observe.Client
}

// podlineArgs are the flags a case adds to the common ones.
func podlineArgs(mode string) ([]string, error) {
	switch mode {
	case result.ModeDefault:
		return nil, nil
	case result.ModeQueueChannel:
		return []string{"--queue", "channel"}, nil
	case result.ModePLEGRelist:
		return []string{"--pleg", "relist"}, nil
	case result.ModeStartsUnlimited:
		return []string{"--start-concurrency", "0"}, nil
	}
	return nil, fmt.Errorf("unknown podline mode %q", mode)
}

func startPodline(ctx context.Context, bin, dir, endpoint string, k result.Key) (*podlineAgent, error) {
	extra, err := podlineArgs(k.Mode)
	if err != nil {
		return nil, err
	}
	return startPodlineNode(ctx, bin, dir, endpoint, nodeName, k.Pods+k.Pods/10+10, extra...)
}

// startPodlineNode starts podline as node node with room for maxPods;
// extra flags go last (a kubeconfig joins it to a cluster).
func startPodlineNode(ctx context.Context, bin, dir, endpoint, node string, maxPods int, extra ...string) (*podlineAgent, error) {
	port, err := observe.FreePort()
	if err != nil {
		return nil, err
	}
	a := &podlineAgent{
		dir:         dir,
		manifestDir: filepath.Join(dir, "manifests"),
		cgroupRoot:  "/podline-bench-" + filepath.Base(dir),
		c:           observe.New(fmt.Sprintf("http://127.0.0.1:%d", port)),
	}
	if err := os.MkdirAll(a.manifestDir, 0o755); err != nil {
		return nil, err
	}
	argv := append([]string{bin,
		"--container-runtime-endpoint", endpoint,
		"--pod-manifest-path", a.manifestDir,
		"--root-dir", filepath.Join(dir, "root"),
		"--pod-logs-dir", filepath.Join(dir, "logs"),
		"--cgroup-root", a.cgroupRoot,
		"--hostname-override", node,
		"--read-only-port", strconv.Itoa(port),
		"--address", "127.0.0.1",
		"--healthz-port", "0",
		"--port", "0",
		"--max-pods", strconv.Itoa(maxPods),
	}, extra...)
	if a.proc, err = startProc("podline", filepath.Join(dir, "podline.log"), argv...); err != nil {
		return nil, err
	}
	err = a.waitFor(ctx, 20*time.Second, func() error {
		_, _, err := a.c.Pods(ctx)
		return err
	})
	if err != nil {
		a.stop()
		return nil, err
	}
	return a, nil
}

func (a *podlineAgent) client() *observe.Client { return a.c }
func (a *podlineAgent) manifests() string       { return a.manifestDir }
func (a *podlineAgent) stop()                   { a.proc.stop(15 * time.Second); a.c.Close() }

func (a *podlineAgent) cleanup() error {
	return cgtree.Remove(a.cgroupRoot)
}
