package libcost

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/util/workqueue"

	"github.com/podline/podline/internal/delay"
)

// The delay queue's users (the pipeline's retries, the event plane's
// second looks, the volume token timers) schedule a key, sometimes move
// it earlier, sometimes cancel it, and have one goroutine act on it when
// it falls due. These benchmarks give both queues that work: keys
// scheduled a moment ahead, every one waited for until it fires.

const delayKeys = 10000

func keys(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = "pod-" + strconv.Itoa(i)
	}
	return out
}

// BenchmarkDelayFire schedules 10,000 keys 1 µs ahead and waits until each
// has fired once: the cost of a burst of retries.
func BenchmarkDelayFire(b *testing.B) {
	ks := keys(delayKeys)
	b.Run("impl=own", func(b *testing.B) {
		var wg sync.WaitGroup
		q := delay.New(func(string) { wg.Done() })
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		go q.Run(ctx)
		b.ReportAllocs()
		for b.Loop() {
			wg.Add(len(ks))
			for _, k := range ks {
				q.After(k, time.Microsecond)
			}
			wg.Wait()
		}
	})
	b.Run("impl=workqueue", func(b *testing.B) {
		var wg sync.WaitGroup
		q := workqueue.NewTypedDelayingQueue[string]()
		defer q.ShutDown()
		go func() {
			for {
				k, shutdown := q.Get()
				if shutdown {
					return
				}
				q.Done(k)
				wg.Done()
			}
		}()
		b.ReportAllocs()
		for b.Loop() {
			wg.Add(len(ks))
			for _, k := range ks {
				q.AddAfter(k, time.Microsecond)
			}
			wg.Wait()
		}
	})
}

// BenchmarkDelayPending keeps 10,000 keys pending an hour ahead and asks
// for each again later (ignored: the earlier request stands), the path a
// pod in back-off that keeps receiving events takes. The workqueue hands
// each request to its waiting loop through a channel; Len is not the
// waiting count, so the loop's work is waited for by a final key that
// falls due at once behind every request.
func BenchmarkDelayPending(b *testing.B) {
	ks := keys(delayKeys)
	b.Run("impl=own", func(b *testing.B) {
		q := delay.New(func(string) {})
		for _, k := range ks {
			q.After(k, time.Hour)
		}
		b.ReportAllocs()
		for b.Loop() {
			for _, k := range ks {
				q.After(k, 2*time.Hour)
			}
		}
		if q.Pending() != len(ks) {
			b.Fatalf("pending %d", q.Pending())
		}
	})
	b.Run("impl=workqueue", func(b *testing.B) {
		q := workqueue.NewTypedDelayingQueue[string]()
		defer q.ShutDown()
		for _, k := range ks {
			q.AddAfter(k, time.Hour)
		}
		b.ReportAllocs()
		for b.Loop() {
			for _, k := range ks {
				q.AddAfter(k, 2*time.Hour)
			}
			q.AddAfter("last", time.Nanosecond)
			if k, _ := q.Get(); k != "last" {
				b.Fatalf("got %s", k)
			} else {
				q.Done(k)
			}
		}
	})
}

// TestDelayEarliestWins shows the semantic gap that keeps internal/delay:
// a request due now replaces a later pending one in internal/delay (the
// key fires once), while the workqueue adds the key at once and keeps the
// later request too, so the key is handed out a second time.
func TestDelayEarliestWins(t *testing.T) {
	fired := make(chan string, 2)
	own := delay.New(func(k string) { fired <- k })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	own.After("pod", 50*time.Millisecond)
	own.After("pod", 0)
	if own.Pending() != 1 {
		t.Fatalf("own: pending %d after two requests for one key, want 1", own.Pending())
	}
	go own.Run(ctx)
	if k := <-fired; k != "pod" {
		t.Fatalf("own: fired %q", k)
	}
	if own.Pending() != 0 {
		t.Fatalf("own: %d requests still pending after the key fired: the later one was kept", own.Pending())
	}

	wq := workqueue.NewTypedDelayingQueue[string]()
	defer wq.ShutDown()
	wq.AddAfter("pod", 50*time.Millisecond)
	wq.AddAfter("pod", 0)
	for i := range 2 {
		k, shutdown := wq.Get()
		if shutdown || k != "pod" {
			t.Fatalf("workqueue: get %d = %q, %v", i, k, shutdown)
		}
		wq.Done(k)
	}
}
