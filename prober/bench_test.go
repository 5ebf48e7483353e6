package prober

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync/atomic"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podline/podline/cri"
	"github.com/podline/podline/cri/fake"
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
	m := New(Config{Exec: ex, Clock: clock, Coalesce: -1, Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
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
		// The scheduler may have read the clock just before the advance and
		// be about to arm its timer from that stale reading, which would
		// put the wake-up past the runs wanted: poke it to look again, as a
		// new probe would.
		select {
		case m.wake <- struct{}{}:
		default:
		}
		<-ex.reached
		ran += chunk
	}
	b.StopTimer()
	b.ReportMetric(probes, "probes")
}

// rawHTTPServer answers every connection with one fixed 200 and closes
// it: a server as cheap as can be, so that a benchmark measures the probe.
func rawHTTPServer(b *testing.B) (string, int) {
	return "127.0.0.1", rawServer(b, func(c net.Conn) {
		_, _ = io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok")
	})
}

// BenchmarkHTTPProbe is one httpGet run against a local server: dial,
// request, response, close.
func BenchmarkHTTPProbe(b *testing.B) {
	ip, port := rawHTTPServer(b)
	h := newHTTPHandler(&v1.HTTPGetAction{Path: "/healthz", Port: intstr.FromInt(port)}, &v1.Container{Name: "app"})
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if out := h.run(ctx, target{ip: ip}, time.Second); out.verdict != succeeded {
			b.Fatalf("run: %+v", out)
		}
	}
}

// BenchmarkExecProbe is one exec run through podline's CRI client to the
// fake runtime over its unix socket: what an exec probe costs the agent
// beyond the runtime's own work (the fake's server side is in the figure).
func BenchmarkExecProbe(b *testing.B) {
	sock, _ := fake.Listen(b, fake.Options{})
	ctx := context.Background()
	rt, err := cri.Dial(ctx, sock, "", 5*time.Second)
	if err != nil {
		b.Fatal(err)
	}
	defer rt.Close()
	sbCfg := &runtimeapi.PodSandboxConfig{Metadata: &runtimeapi.PodSandboxMetadata{Name: "p", Namespace: "ns", Uid: "u1"}}
	sb, err := rt.RunPodSandbox(ctx, sbCfg, "")
	if err != nil {
		b.Fatal(err)
	}
	id, err := rt.CreateContainer(ctx, sb, &runtimeapi.ContainerConfig{
		Metadata: &runtimeapi.ContainerMetadata{Name: "app"}, Image: &runtimeapi.ImageSpec{Image: "busybox"}}, sbCfg)
	if err != nil {
		b.Fatal(err)
	}
	if err := rt.StartContainer(ctx, id); err != nil {
		b.Fatal(err)
	}
	h := &execHandler{cmd: []string{"cat", "/tmp/healthy"}, execer: rt}
	b.ReportAllocs()
	for b.Loop() {
		if out := h.run(ctx, target{containerID: id}, time.Second); out.verdict != succeeded {
			b.Fatalf("run: %+v", out)
		}
	}
}
