package main

import (
	"context"
	"path/filepath"
	"time"

	"github.com/podline/podline/bench/internal/result"
)

// fakeCRI is one cmd/fakecri process: a fresh runtime for each case, so no
// case inherits another's sandboxes.
type fakeCRI struct {
	*proc
	socket string
}

func startFakeCRI(ctx context.Context, bin, dir, runtime string, extra ...string) (*fakeCRI, error) {
	sock := filepath.Join(dir, "fakecri.sock")
	argv := append([]string{bin, "--listen", sock}, extra...)
	if runtime == result.RuntimeFakeZero {
		argv = append(argv, "--zero-latency")
	}
	p, err := startProc("fakecri", filepath.Join(dir, "fakecri.log"), argv...)
	if err != nil {
		return nil, err
	}
	f := &fakeCRI{proc: p, socket: sock}
	if err := p.waitFor(ctx, 10*time.Second, socketReady(sock)); err != nil {
		p.stop(time.Second)
		return nil, err
	}
	return f, nil
}
