package kubelet

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/podline/podline/bench/internal/cgtree"
	"github.com/podline/podline/bench/internal/observe"
)

// ErrExited means the kubelet died before it served /pods.
var ErrExited = errors.New("kubelet exited")

// readyTimeout bounds Start when ctx has no deadline: the kubelet serves
// /pods within seconds, or it is stuck on something that will not pass.
const readyTimeout = 90 * time.Second

// Process is one running kubelet.
type Process struct {
	cfg  Config
	url  string
	cmd  *exec.Cmd
	done chan struct{} // closed once cmd.Wait returned
	host hostState     // host settings as they were before the kubelet ran
}

// Start writes the configuration into cfg.Dir, starts the kubelet and
// waits until its read-only port answers /pods. On error nothing is left
// running and the host is as it was, except cfg.Dir, which keeps the log
// the error quotes; removing it is the caller's.
func Start(ctx context.Context, cfg Config) (*Process, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	for _, port := range []*int{&cfg.ReadOnlyPort, &cfg.Port} {
		if *port == 0 {
			if *port, err = observe.FreePort(); err != nil {
				return nil, fmt.Errorf("kubelet port: %w", err)
			}
		}
	}
	for _, d := range []string{cfg.ManifestDir(), cfg.RootDir(), cfg.PodLogsDir()} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, fmt.Errorf("kubelet dirs: %w", err)
		}
	}
	y, err := render(cfg)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(cfg.ConfigPath(), y, 0o644); err != nil {
		return nil, fmt.Errorf("write kubelet configuration: %w", err)
	}
	// The kubelet refuses a cgroup root that does not exist in every
	// hierarchy; one left by an earlier run that died is removed first.
	if err := cgtree.Remove(cfg.CgroupRoot); err != nil {
		return nil, fmt.Errorf("stale kubelet cgroups: %w", err)
	}
	host, err := saveHostState(cfg.Dir)
	if err != nil {
		return nil, err
	}
	p := &Process{
		cfg:  cfg,
		url:  "http://127.0.0.1:" + strconv.Itoa(cfg.ReadOnlyPort),
		done: make(chan struct{}),
		host: host,
	}
	err = cgtree.Create(cfg.CgroupRoot)
	if err == nil {
		err = p.start()
	}
	if err == nil {
		err = p.waitReady(ctx)
	}
	if err != nil {
		if p.cmd != nil && p.cmd.Process != nil {
			p.Stop()
		}
		return nil, errors.Join(err, p.cleanupHost())
	}
	return p, nil
}

func (p *Process) start() error {
	logf, err := os.Create(p.cfg.LogPath())
	if err != nil {
		return fmt.Errorf("kubelet log: %w", err)
	}
	defer logf.Close() // the child has its own descriptor
	p.cmd = exec.Command(p.cfg.Bin, args(p.cfg)...)
	p.cmd.Stdout, p.cmd.Stderr = logf, logf
	p.cmd.SysProcAttr = &syscall.SysProcAttr{
		// Its own process group: a ^C meant for the bench reaches the
		// kubelet through Stop, in order, not all at once.
		Setpgid: true,
		// If the bench dies without Stop, the kubelet goes with it. (The
		// signal follows the forking OS thread, which the Go runtime
		// keeps for the life of the process.)
		Pdeathsig: syscall.SIGKILL,
	}
	if err := p.cmd.Start(); err != nil {
		return fmt.Errorf("start kubelet %s: %w", p.cfg.Bin, err)
	}
	go func() { p.cmd.Wait(); close(p.done) }()
	return nil
}

// waitReady polls /pods until it answers 200, the kubelet exits, or ctx
// (at most readyTimeout) ends.
func (p *Process) waitReady(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	client := &http.Client{Timeout: 2 * time.Second}
	defer client.CloseIdleConnections()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, p.url+"/pods", nil)
		if resp, err := client.Do(req); err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-p.done:
			return fmt.Errorf("%w before serving %s/pods (%s); log %s:\n%s",
				ErrExited, p.url, p.cmd.ProcessState, p.cfg.LogPath(), observe.LogTail(p.cfg.LogPath(), 20))
		case <-ctx.Done():
			return fmt.Errorf("kubelet did not serve %s/pods: %w; log %s:\n%s",
				p.url, ctx.Err(), p.cfg.LogPath(), observe.LogTail(p.cfg.LogPath(), 20))
		case <-tick.C:
		}
	}
}

// Pid is the kubelet's process id.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// URL is the read-only port's base URL, e.g. http://127.0.0.1:10255.
func (p *Process) URL() string { return p.url }

// LogPath is the file holding the kubelet's output.
func (p *Process) LogPath() string { return p.cfg.LogPath() }

// ManifestDir is the static pod directory the kubelet watches.
func (p *Process) ManifestDir() string { return p.cfg.ManifestDir() }

// Config is the configuration the kubelet runs with, defaults filled in.
func (p *Process) Config() Config { return p.cfg }

// Exited is closed when the kubelet has exited.
func (p *Process) Exited() <-chan struct{} { return p.done }

// stopGrace is how long the kubelet gets to exit on SIGTERM. It stops no
// pods when it exits, so it takes well under a second.
const stopGrace = 10 * time.Second

// Stop sends SIGTERM, then SIGKILL after a grace period, and waits for the
// kubelet to exit. The pods stay in the runtime: the kubelet leaves them,
// as it does on a real node. It is safe to call more than once.
func (p *Process) Stop() {
	select {
	case <-p.done:
		return
	default:
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(stopGrace):
		p.cmd.Process.Kill()
		<-p.done
	}
}

// Cleanup stops the kubelet if it still runs, then removes what it left on
// the host: the mounts under its root dir, the cgroups under its cgroup
// root in every hierarchy, the host settings it changed, and Dir. It
// reports every failure and carries on past each.
func (p *Process) Cleanup() error {
	p.Stop()
	err := p.cleanupHost()
	if rmErr := os.RemoveAll(p.cfg.Dir); rmErr != nil {
		err = errors.Join(err, fmt.Errorf("remove kubelet dir: %w", rmErr))
	}
	return err
}

// cleanupHost undoes what the stopped kubelet did outside Dir, and
// unmounts what it mounted inside it.
func (p *Process) cleanupHost() error {
	return errors.Join(
		unmountUnder(p.cfg.RootDir()),
		cgtree.Remove(p.cfg.CgroupRoot),
		p.host.restore(),
	)
}

// Version runs `bin --version` and returns the version it reports, e.g.
// "v1.36.3".
func Version(bin string) (string, error) {
	out, err := exec.Command(bin, "--version").Output()
	if err != nil {
		return "", fmt.Errorf("kubelet version: %w", err)
	}
	// "Kubernetes v1.36.3"
	f := strings.Fields(string(out))
	if len(f) != 2 || f[0] != "Kubernetes" {
		return "", fmt.Errorf("kubelet version: unexpected output %q", bytes.TrimSpace(out))
	}
	return f[1], nil
}
