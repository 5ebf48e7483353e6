package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"

	"github.com/podline/podline/bench/internal/observe"
)

// proc is one child process the suite runs, logging to a file of its own.
type proc struct {
	name    string
	cmd     *exec.Cmd
	logPath string
	done    chan struct{}
}

func startProc(name, logPath string, argv ...string) (*proc, error) {
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	defer logf.Close() // the child holds its own descriptor
	p := &proc{name: name, cmd: exec.Command(argv[0], argv[1:]...), logPath: logPath, done: make(chan struct{})}
	p.cmd.Stdout, p.cmd.Stderr = logf, logf
	// Its own process group: an interrupt of the suite reaches the suite
	// only, which then stops its children in order.
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := p.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	go func() { p.cmd.Wait(); close(p.done) }()
	return p, nil
}

func (p *proc) pid() int { return p.cmd.Process.Pid }

func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// stop sends SIGTERM and waits; SIGKILL after grace.
func (p *proc) stop(grace time.Duration) {
	if p.exited() {
		return
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(grace):
		progress("%s ignored SIGTERM for %s, killing it", p.name, grace)
		p.cmd.Process.Signal(syscall.SIGKILL)
		<-p.done
	}
}

// errExited says the process is gone, with the end of its log.
func (p *proc) errExited() error {
	return fmt.Errorf("%s exited (%v); log %s ends:\n%s", p.name, p.cmd.ProcessState, p.logPath, observe.LogTail(p.logPath, 15))
}

// waitFor polls ready every 20 ms until it returns nil, the process exits
// or timeout passes.
func (p *proc) waitFor(ctx context.Context, timeout time.Duration, ready func() error) error {
	deadline := time.Now().Add(timeout)
	for {
		err := ready()
		if err == nil {
			return nil
		}
		if p.exited() {
			return p.errExited()
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s not ready after %s: %w; log %s ends:\n%s", p.name, timeout, err, p.logPath, observe.LogTail(p.logPath, 15))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// socketReady is nil once path is a unix socket.
func socketReady(path string) func() error {
	return func() error {
		fi, err := os.Stat(path)
		if err != nil {
			return err
		}
		if fi.Mode().Type() != os.ModeSocket {
			return errors.New(path + " is not a socket")
		}
		return nil
	}
}
