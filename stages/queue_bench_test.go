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
