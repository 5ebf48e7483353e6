package prober

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// countingExec succeeds at once and says when a number of runs is reached.
type countingExec struct {
	n       atomic.Int64
	target  atomic.Int64
	reached chan struct{}
}

var okResponse = &runtimeapi.ExecSyncResponse{}

func (c *countingExec) ExecSync(context.Context, string, []string, time.Duration) (*runtimeapi.ExecSyncResponse, error) {
	if c.n.Add(1) == c.target.Load() {
		c.reached <- struct{}{}
	}
	return okResponse, nil
}

// BenchmarkScheduler10k measures what the scheduler, the workers and the
// result bookkeeping cost per probe run, with 10,000 probes armed (one per
// pod) and a handler that costs nothing. The probes are due 1 ms apart on
// the fake clock, so advancing it by k ms makes exactly k runs; one op is
// one probe run.
func BenchmarkScheduler10k(b *testing.B) {
	const probes = 10000
	clock := newFakeClock()
	ex := &countingExec{reached: make(chan struct{})}
	m := New(Config{Exec: ex, Clock: clock, Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	next := 0
	m.jitter = func(time.Duration) time.Duration { next++; return time.Duration(next) * time.Millisecond }
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { m.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	for i := range probes {
		uid := fmt.Sprintf("b%05d", i)
		m.Sync(podWith(uid, nil, execProbe("ready"), nil), "10.0.0.1", runningApp("c"+uid, clock.Now()))
	}

	b.ReportAllocs()
	b.ResetTimer()
	for ran := 0; ran < b.N; {
		chunk := min(b.N-ran, 1000)
		ex.target.Store(ex.n.Load() + int64(chunk))
		clock.Advance(time.Duration(chunk) * time.Millisecond)
		<-ex.reached
		ran += chunk
	}
	b.StopTimer()
	b.ReportMetric(probes, "probes")
}
