package stages

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
)

// The producer/consumer benchmarks follow the shape of the Go runtime's
// channel benchmark (benchmarkChanProdCons): GOMAXPROCS producers and as many
// consumers, producers claiming batches of items from a shared counter, some
// local work per item on both sides, and one sentinel per producer to stop the
// consumers. Run with -cpu=1,2,4,8 and compare with benchstat:
//
//	go test -run='^$' -bench='Queue|Chan' -cpu=1,2,4,8 -count=10 ./stages/ > new.txt
//	benchstat -col .name -row /cap,/work new.txt

const prodConsBatch = 1000

func BenchmarkChan(b *testing.B) {
	prodConsMatrix(b, func(capacity int) (func(int), func() int) {
		c := make(chan int, capacity)
		return func(v int) { c <- v }, func() int { return <-c }
	})
}

func BenchmarkQueue(b *testing.B) {
	prodConsMatrix(b, func(capacity int) (func(int), func() int) {
		q := NewQueue[int](capacity)
		// Queue never blocks; like any caller of the bare queue, the
		// benchmark must yield to let the other side run.
		send := func(v int) {
			for !q.TryEnqueue(v) {
				runtime.Gosched()
			}
		}
		recv := func() int {
			for {
				if v, ok := q.TryDequeue(); ok {
					return v
				}
				runtime.Gosched()
			}
		}
		return send, recv
	})
}

func BenchmarkBlockingQueue(b *testing.B) {
	prodConsMatrix(b, func(capacity int) (func(int), func() int) {
		q := NewBlockingQueue[int](capacity)
		ctx := context.Background()
		send := func(v int) {
			if err := q.Put(ctx, v); err != nil {
				panic(err)
			}
		}
		recv := func() int {
			v, err := q.Take(ctx)
			if err != nil {
				panic(err)
			}
			return v
		}
		return send, recv
	})
}

func prodConsMatrix(b *testing.B, open func(capacity int) (send func(int), recv func() int)) {
	for _, capacity := range []int{128, 1024} {
		for _, work := range []int{0, 100} {
			b.Run(fmt.Sprintf("cap=%d/work=%d", capacity, work), func(b *testing.B) {
				send, recv := open(capacity)
				prodCons(b, work, send, recv)
			})
		}
	}
}

// prodCons passes b.N items (all 1) from GOMAXPROCS producers to as many
// consumers; 0 is the stop sentinel.
func prodCons(b *testing.B, work int, send func(int), recv func() int) {
	b.ReportAllocs()
	procs := runtime.GOMAXPROCS(0)
	var claimed atomic.Int64
	var sink atomic.Int64
	var wg sync.WaitGroup
	b.ResetTimer()
	for p := 0; p < procs; p++ {
		wg.Add(2)
		go func() {
			defer wg.Done()
			foo := 0
			for {
				end := claimed.Add(prodConsBatch)
				start := end - prodConsBatch
				if start >= int64(b.N) {
					break
				}
				for i := start; i < min(end, int64(b.N)); i++ {
					foo = localWork(foo, work)
					send(1)
				}
			}
			send(0)
			sink.Add(int64(foo))
		}()
		go func() {
			defer wg.Done()
			foo := 0
			for recv() != 0 {
				foo = localWork(foo, work)
			}
			sink.Add(int64(foo))
		}()
	}
	wg.Wait()
	if sink.Load() == 42 {
		b.Log("unreachable; keeps the local work alive")
	}
}

func localWork(foo, n int) int {
	for i := 0; i < n; i++ {
		foo *= 2
		foo /= 2
	}
	return foo
}

// The pair benchmarks measure the uncontended cost of one item going in and
// out on a single goroutine.

func BenchmarkChanPair(b *testing.B) {
	b.ReportAllocs()
	c := make(chan int, 1024)
	for i := 0; b.Loop(); i++ {
		c <- i
		<-c
	}
}

func BenchmarkQueuePair(b *testing.B) {
	b.ReportAllocs()
	q := NewQueue[int](1024)
	for i := 0; b.Loop(); i++ {
		if !q.TryEnqueue(i) {
			b.Fatal("enqueue failed")
		}
		if _, ok := q.TryDequeue(); !ok {
			b.Fatal("dequeue failed")
		}
	}
}

func BenchmarkBlockingQueuePair(b *testing.B) {
	b.ReportAllocs()
	q := NewBlockingQueue[int](1024)
	ctx := context.Background()
	for i := 0; b.Loop(); i++ {
		if err := q.Put(ctx, i); err != nil {
			b.Fatal(err)
		}
		if _, err := q.Take(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

// The StageQueue benchmarks go through the interface the pipeline uses, for
// every kind: the pair against BenchmarkBlockingQueuePair is the cost of the
// interface call, prod/cons across kinds is the --queue=channel ablation.

func BenchmarkStageQueue(b *testing.B) {
	for _, k := range QueueKinds() {
		b.Run("queue="+k.String(), func(b *testing.B) {
			prodConsMatrix(b, func(capacity int) (func(int), func() int) {
				q := newStageQueue[int](k, capacity)
				ctx := context.Background()
				send := func(v int) {
					if err := q.Put(ctx, v); err != nil {
						panic(err)
					}
				}
				recv := func() int {
					v, err := q.Take(ctx)
					if err != nil {
						panic(err)
					}
					return v
				}
				return send, recv
			})
		})
	}
}

func BenchmarkStageQueuePair(b *testing.B) {
	for _, k := range QueueKinds() {
		b.Run("queue="+k.String(), func(b *testing.B) {
			b.ReportAllocs()
			q := newStageQueue[int](k, 1024)
			ctx := context.Background()
			for i := 0; b.Loop(); i++ {
				if !q.TryPut(i) {
					b.Fatal("TryPut failed")
				}
				if _, err := q.Take(ctx); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// The hand-off benchmarks have the pipeline's contention, not GOMAXPROCS
// a side: each stage queue has the producers and consumers it has in
// podline with DefaultWorkers (the stage before it hands on, its own
// workers take), a window of 1024 passes in flight shared by all (a
// buffered channel, as Pipeline.gate) and queues of that capacity, and
// producers that TryPut and fall back to Put, as Pipeline.enqueue. Work is
// the local work per item on each side; the stages' real work is µs to ms,
// so work=0 is the queue's cost alone and the most contended case.
//
//	go test -run='^$' -bench='StageHandoff' -cpu=2 -count=5 ./stages/

// handoffShapes are the queues of a first start: producers → consumers.
var handoffShapes = []struct {
	stage      StageID
	prod, cons int
}{
	{StageAdmit, 2, DefaultWorkers[StageAdmit]}, // the source dispatcher and the retry queue
	{StageVolumes, DefaultWorkers[StageAdmit], DefaultWorkers[StageVolumes]},
	{StageSandbox, DefaultWorkers[StageVolumes], DefaultWorkers[StageSandbox]},
	{StageContainers, DefaultWorkers[StageSandbox], DefaultWorkers[StageContainers]},
	{StageStatus, DefaultWorkers[StageContainers], DefaultWorkers[StageStatus]},
}

func BenchmarkStageHandoff(b *testing.B) {
	for _, sh := range handoffShapes {
		for _, work := range []int{0, 1000} {
			for _, k := range QueueKinds() {
				name := fmt.Sprintf("stage=%s/prod=%d/cons=%d/work=%d/queue=%s", sh.stage, sh.prod, sh.cons, work, k)
				b.Run(name, func(b *testing.B) {
					handoff(b, newStageQueue[int](k, 1024), 1024, sh.prod, sh.cons, work)
				})
			}
		}
	}
}

// handoff passes b.N items from prod producers to cons consumers through
// q, at most window in flight; it stops the consumers with a sentinel
// each.
func handoff(b *testing.B, q StageQueue[int], window, prod, cons, work int) {
	b.ReportAllocs()
	ctx := context.Background()
	gate := make(chan struct{}, window)
	var refused refusals
	put := func(v int) { refused.put(ctx, q, v) }
	var claimed atomic.Int64
	var sink atomic.Int64
	var pw, cw sync.WaitGroup
	b.ResetTimer()
	for range cons {
		cw.Add(1)
		go func() {
			defer cw.Done()
			foo := 0
			for {
				v, err := q.Take(ctx)
				if err != nil {
					panic(err)
				}
				if v == 0 {
					break
				}
				<-gate
				foo = localWork(foo, work)
			}
			sink.Add(int64(foo))
		}()
	}
	for range prod {
		pw.Add(1)
		go func() {
			defer pw.Done()
			foo := 0
			for {
				end := claimed.Add(prodConsBatch / 10)
				start := end - prodConsBatch/10
				if start >= int64(b.N) {
					break
				}
				for i := start; i < min(end, int64(b.N)); i++ {
					foo = localWork(foo, work)
					gate <- struct{}{}
					put(1)
				}
			}
			sink.Add(int64(foo))
		}()
	}
	pw.Wait()
	for range cons {
		gate <- struct{}{} // the sentinel takes a place like any item
		put(0)
	}
	cw.Wait()
	refused.report(b)
	if sink.Load() == 42 {
		b.Log("unreachable; keeps the local work alive")
	}
}

// refusals hands items on as Pipeline.enqueue does, TryPut and then Put,
// and counts the TryPuts refused. A refusal costs the Put fallback (a
// yield, perhaps a park); the pipeline counts them as
// podline_pipeline_queue_waits_total.
type refusals struct{ n atomic.Int64 }

func (r *refusals) put(ctx context.Context, q StageQueue[int], v int) {
	if !q.TryPut(v) {
		r.n.Add(1)
		if err := q.Put(ctx, v); err != nil {
			panic(err)
		}
	}
}

func (r *refusals) report(b *testing.B) {
	b.ReportMetric(float64(r.n.Load())/float64(b.N), "refusals/op")
}

// BenchmarkStageWake is the hand-off to a stage whose workers are all
// parked, as between the bursts of a start or whenever the runtime is
// slower than podline: one item at a time goes to a queue with cons parked
// workers, one of which hands it back through a second queue. ns/op is a
// round trip: two wake-ups of a parked goroutine.
func BenchmarkStageWake(b *testing.B) {
	for _, cons := range []int{1, 4, 64} {
		for _, k := range QueueKinds() {
			b.Run(fmt.Sprintf("cons=%d/queue=%s", cons, k), func(b *testing.B) {
				b.ReportAllocs()
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				in, back := newStageQueue[int](k, 1024), newStageQueue[int](k, 1024)
				var wg sync.WaitGroup
				for range cons {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for {
							v, err := in.Take(ctx)
							if err != nil {
								return
							}
							back.TryPut(v)
						}
					}()
				}
				for i := 0; b.Loop(); i++ {
					if !in.TryPut(i) {
						b.Fatal("TryPut failed")
					}
					if _, err := back.Take(ctx); err != nil {
						b.Fatal(err)
					}
				}
				cancel()
				wg.Wait()
			})
		}
	}
}

// BenchmarkStageChain is the pipeline's shape end to end: a pass takes a
// place in the window (a buffered channel, as Pipeline.gate) from one of
// two producers (the source dispatcher and the retry queue), crosses the
// five stage queues of a first start, each taken by its stage's
// DefaultWorkers workers with work units of local work, and gives its
// place back after the status stage. StageHandoff pays the window at every
// queue; a pass pays it once for five queues, as here. ns/op is one pass.
//
//	go test -run='^$' -bench='StageChain' -cpu=2 -count=5 ./stages/
func BenchmarkStageChain(b *testing.B) {
	for _, work := range []int{0, 1000} {
		for _, k := range QueueKinds() {
			b.Run(fmt.Sprintf("work=%d/queue=%s", work, k), func(b *testing.B) {
				chain(b, k, 1024, work)
			})
		}
	}
}

func chain(b *testing.B, k QueueKind, window, work int) {
	b.ReportAllocs()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	gate := make(chan struct{}, window)
	var qs [NumStages]StageQueue[int]
	for s := range qs {
		qs[s] = newStageQueue[int](k, window)
	}
	var refused refusals
	put := func(q StageQueue[int], v int) { refused.put(ctx, q, v) }
	var passed, sink atomic.Int64
	done := make(chan struct{})
	var wg sync.WaitGroup
	for s := StageID(0); s < NumStages; s++ {
		for range DefaultWorkers[s] {
			wg.Add(1)
			go func() {
				defer wg.Done()
				foo := 0
				defer func() { sink.Add(int64(foo)) }()
				for {
					v, err := qs[s].Take(ctx)
					if err != nil {
						return
					}
					foo = localWork(foo, work)
					if s+1 < NumStages {
						put(qs[s+1], v)
						continue
					}
					<-gate
					if passed.Add(1) == int64(b.N) {
						close(done)
					}
				}
			}()
		}
	}
	b.ResetTimer()
	var claimed atomic.Int64
	for range 2 {
		go func() {
			for {
				if claimed.Add(1) > int64(b.N) {
					return
				}
				gate <- struct{}{}
				put(qs[StageAdmit], 1)
			}
		}()
	}
	<-done
	b.StopTimer()
	refused.report(b)
	cancel()
	wg.Wait()
	if sink.Load() == 42 {
		b.Log("unreachable; keeps the local work alive")
	}
}
