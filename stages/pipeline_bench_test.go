package stages_test

import (
	"fmt"
	"runtime"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/podline/podline/cri/fake"
	"github.com/podline/podline/stages"
)

// BenchmarkPipelineStart hands N pods to the pipeline at once and measures
// until every one is Running: the agent's own cost of a pod start, what the
// density benchmark in bench/ measures end to end. It runs with podline's
// default window and workers, on each stage queue kind (the --queue
// ablation), against the in-process fake CRI answering at once or with
// containerd-like latencies.
//
// The relist runs every second, as with podline --pleg=relist (the events
// mode relists far less); starting a pod does not wait for it.
//
// cpu-µs/pod is the whole test process's CPU time, so it includes the fake
// runtime, both ends of the gRPC connection and the kernel's work creating
// each pod's log directory: an upper bound on the agent's own.
//
//	go test -run='^$' -bench='PipelineStart/latency=zero/queue=lockfree/pods=10000' ./stages/
func BenchmarkPipelineStart(b *testing.B) {
	latencies := []struct {
		name string
		fake fake.Options
	}{
		{"zero", fake.Options{}},
		{"containerd", fake.Options{Latency: fake.ContainerdLikeLatency()}},
	}
	for _, lat := range latencies {
		for _, q := range stages.QueueKinds() {
			for _, n := range []int{100, 1000, 10000} {
				b.Run(fmt.Sprintf("latency=%s/queue=%s/pods=%d", lat.name, q, n), func(b *testing.B) {
					benchmarkStart(b, harnessOpts{window: 1024, maxPods: n, queue: q, workers: stages.DefaultWorkers, relist: time.Second, fake: lat.fake}, n)
				})
			}
		}
	}
}

func benchmarkStart(b *testing.B, o harnessOpts, n int) {
	b.ReportAllocs()
	var wall, cpu time.Duration
	var peakGoroutines atomic.Int64
	for range b.N {
		b.StopTimer()
		h := newHarness(b, o)
		pods := make([]*v1.Pod, n)
		for i := range pods {
			pods[i] = testPod(fmt.Sprintf("bench-%05d", i), func(p *v1.Pod) {
				p.Spec.Containers[0].Resources = v1.ResourceRequirements{}
			})
		}
		runtime.GC()
		b.StartTimer()
		start, cpuStart := time.Now(), processCPU(b)
		stopSampling := sampleGoroutines(&peakGoroutines)
		for _, p := range pods {
			h.pipe.Upsert(p)
		}
		for _, p := range pods {
			h.waitRunningFast(p.UID)
		}
		wall += time.Since(start)
		cpu += processCPU(b) - cpuStart
		stopSampling()
		b.StopTimer()
		h.stop()
	}
	pods := float64(n * b.N)
	b.ReportMetric(pods/wall.Seconds(), "pods/s")
	b.ReportMetric(float64(wall.Microseconds())/pods, "µs/pod")
	b.ReportMetric(float64(cpu.Microseconds())/pods, "cpu-µs/pod")
	b.ReportMetric(float64(peakGoroutines.Load()), "peak-goroutines")
}

// sampleGoroutines records the highest goroutine count seen until the
// returned stop is called. Goroutines must grow with stages and workers, not
// with pods; the fake runtime's per-call goroutines are counted too.
func sampleGoroutines(peak *atomic.Int64) (stop func()) {
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(10 * time.Millisecond)
		defer t.Stop()
		for {
			if n := int64(runtime.NumGoroutine()); n > peak.Load() {
				peak.Store(n)
			}
			select {
			case <-t.C:
			case <-done:
				return
			}
		}
	}()
	return func() { close(done); <-finished }
}

func processCPU(tb testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatalf("getrusage: %v", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
