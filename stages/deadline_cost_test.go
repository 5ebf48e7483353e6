package stages

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Pods waiting for their active deadline cost one entry each in the
// pipeline's one retry queue: no goroutine, no timer and no pass of their
// own until the deadline comes.
func TestWaitingDeadlinesCostOneQueueEntryEach(t *testing.T) {
	const pods = 10_000
	p, handled := countingPipeline(t, 256, 2)
	runPipeline(t, p)
	<-p.started
	before := runtime.NumGoroutine()

	for i := range pods {
		p.Upsert(unitPod(withDeadline(3600), func(pod *v1.Pod) {
			pod.Name = fmt.Sprintf("p%05d", i)
			pod.UID = types.UID("uid-" + pod.Name)
		}))
	}
	settle := time.Now().Add(30 * time.Second)
	for len(p.gate) > 0 || p.retry.Pending() < pods {
		if time.Now().After(settle) {
			t.Fatalf("in flight %d, waiting in the retry queue %d; want 0 and %d", len(p.gate), p.retry.Pending(), pods)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if n := p.retry.Pending(); n != pods {
		t.Fatalf("retry queue holds %d entries, want one per pod: %d", n, pods)
	}
	after := runtime.NumGoroutine()
	t.Logf("%d pods waiting for their deadlines: %d goroutines before, %d after; %d entries in the retry queue",
		pods, before, after, p.retry.Pending())
	if after > before+2 {
		t.Fatalf("goroutines grew from %d to %d with %d pods waiting", before, after, pods)
	}

	// Waiting costs no pass: nothing runs until the deadlines.
	passes := handled.Load()
	time.Sleep(200 * time.Millisecond)
	if n := handled.Load() - passes; n != 0 {
		t.Fatalf("%d stage runs while every pod only waits for its deadline", n)
	}
	if passes != pods*int64(len(routeFirstSync)) {
		t.Fatalf("%d stage runs, want one first pass per pod (%d)", passes, pods*len(routeFirstSync))
	}
}
