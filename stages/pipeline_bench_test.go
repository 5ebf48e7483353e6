package stages_test

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
)

// BenchmarkPipelineStart hands N pods to the pipeline at once, against a
// zero-latency fake CRI, and measures until every one is Running. It is the
// agent's own cost of a pod start: what the density benchmark in bench/
// measures end to end.
func BenchmarkPipelineStart(b *testing.B) {
	for _, n := range []int{100, 1000} {
		b.Run(fmt.Sprintf("pods=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			var total time.Duration
			for range b.N {
				b.StopTimer()
				h := newHarness(b, harnessOpts{window: 1024, maxPods: n})
				pods := make([]*v1.Pod, n)
				for i := range pods {
					pods[i] = testPod(fmt.Sprintf("bench-%05d", i), func(p *v1.Pod) {
						p.Spec.Containers[0].Resources = v1.ResourceRequirements{}
					})
				}
				runtime.GC()
				b.StartTimer()
				start := time.Now()
				for _, p := range pods {
					h.pipe.Upsert(p)
				}
				for _, p := range pods {
					h.waitRunningFast(p.UID)
				}
				total += time.Since(start)
				b.StopTimer()
				h.stop()
			}
			b.ReportMetric(float64(n)*float64(b.N)/total.Seconds(), "pods/s")
			b.ReportMetric(float64(total.Microseconds())/float64(n*b.N), "µs/pod")
		})
	}
}
