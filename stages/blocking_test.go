package stages

import (
	"context"
	"errors"
	"sync"
	"syscall"
	"testing"
	"time"
)

// waitFor polls cond: tests use it to reach a state (e.g. "one consumer is
// parked") before acting. The queue itself never polls.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

type takeResult struct {
	v   int
	err error
}

func goTake(ctx context.Context, q *BlockingQueue[int]) <-chan takeResult {
	ch := make(chan takeResult, 1)
	go func() {
		v, err := q.Take(ctx)
		ch <- takeResult{v, err}
	}()
	return ch
}

func goPut(ctx context.Context, q *BlockingQueue[int], v int) <-chan error {
	ch := make(chan error, 1)
	go func() { ch <- q.Put(ctx, v) }()
	return ch
}

func TestTakeParksUntilPut(t *testing.T) {
	q := NewBlockingQueue[int](4)
	res := goTake(context.Background(), q)
	waitFor(t, "a parked consumer", func() bool { c, _ := q.Waiting(); return c == 1 })
	select {
	case r := <-res:
		t.Fatalf("Take on an empty queue returned %+v", r)
	case <-time.After(20 * time.Millisecond):
	}
	if err := q.Put(context.Background(), 7); err != nil {
		t.Fatal(err)
	}
	if r := <-res; r.v != 7 || r.err != nil {
		t.Fatalf("Take = %+v, want 7", r)
	}
	if c, p := q.Waiting(); c != 0 || p != 0 {
		t.Fatalf("Waiting = %d, %d after the hand-off", c, p)
	}
}

func TestPutBlocksWhileFull(t *testing.T) {
	q := NewBlockingQueue[int](2)
	ctx := context.Background()
	for i := 1; i <= 2; i++ {
		if err := q.Put(ctx, i); err != nil {
			t.Fatal(err)
		}
	}
	if q.TryPut(99) {
		t.Fatal("TryPut into a full queue succeeded")
	}
	res := goPut(ctx, q, 3)
	waitFor(t, "a parked producer", func() bool { _, p := q.Waiting(); return p == 1 })
	select {
	case err := <-res:
		t.Fatalf("Put into a full queue returned %v", err)
	case <-time.After(20 * time.Millisecond):
	}
	if v, err := q.Take(ctx); v != 1 || err != nil {
		t.Fatalf("Take = %d, %v; want 1", v, err)
	}
	if err := <-res; err != nil {
		t.Fatalf("released Put = %v", err)
	}
	for want := 2; want <= 3; want++ {
		if v, ok := q.TryTake(); !ok || v != want {
			t.Fatalf("TryTake = %d, %v; want %d", v, ok, want)
		}
	}
	if v, ok := q.TryTake(); ok {
		t.Fatalf("TryTake on an empty queue = %d", v)
	}
}

func TestContextEndsParkedCalls(t *testing.T) {
	f := func(name string, makeCtx func() (context.Context, context.CancelFunc), wantErr error) {
		t.Helper()
		q := NewBlockingQueue[int](1)
		ctx, cancel := makeCtx()
		defer cancel()
		take := goTake(ctx, q)
		// A deadline may end the Take before it is seen parked.
		waitFor(t, name+": a parked consumer", func() bool { c, _ := q.Waiting(); return c == 1 || ctx.Err() != nil })
		cancel()
		if r := <-take; !errors.Is(r.err, wantErr) {
			t.Fatalf("%s: Take = %+v, want %v", name, r, wantErr)
		}

		ctx, cancel = makeCtx()
		defer cancel()
		if err := q.Put(ctx, 1); err != nil {
			t.Fatal(err)
		}
		put := goPut(ctx, q, 2)
		waitFor(t, name+": a parked producer", func() bool { _, p := q.Waiting(); return p == 1 || ctx.Err() != nil })
		cancel()
		if err := <-put; !errors.Is(err, wantErr) {
			t.Fatalf("%s: Put = %v, want %v", name, err, wantErr)
		}
		if c, p := q.Waiting(); c != 0 || p != 0 {
			t.Fatalf("%s: Waiting = %d, %d after cancellation", name, c, p)
		}
		// The queue still works: the cancelled Put left nothing behind.
		if v, ok := q.TryTake(); !ok || v != 1 {
			t.Fatalf("%s: TryTake = %d, %v; want 1", name, v, ok)
		}
		if q.Len() != 0 {
			t.Fatalf("%s: Len = %d", name, q.Len())
		}
	}
	f("cancel", func() (context.Context, context.CancelFunc) {
		return context.WithCancel(context.Background())
	}, context.Canceled)
	f("deadline", func() (context.Context, context.CancelFunc) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
		return ctx, func() {
			// Let the deadline itself end the call before cancel runs.
			<-ctx.Done()
			cancel()
		}
	}, context.DeadlineExceeded)
}

func TestCloseSemantics(t *testing.T) {
	ctx := context.Background()
	q := NewBlockingQueue[int](2)
	parkedTakes := NewBlockingQueue[int](2)
	takes := []<-chan takeResult{goTake(ctx, parkedTakes), goTake(ctx, parkedTakes)}
	for i := 1; i <= 2; i++ {
		if err := q.Put(ctx, i); err != nil {
			t.Fatal(err)
		}
	}
	put := goPut(ctx, q, 3)
	waitFor(t, "parked calls", func() bool {
		_, p := q.Waiting()
		c, _ := parkedTakes.Waiting()
		return p == 1 && c == 2
	})

	q.Close()
	parkedTakes.Close()
	q.Close() // idempotent

	if err := <-put; !errors.Is(err, ErrClosed) {
		t.Fatalf("parked Put after Close = %v, want ErrClosed", err)
	}
	for _, r := range takes {
		if r := <-r; !errors.Is(r.err, ErrClosed) {
			t.Fatalf("parked Take after Close = %+v, want ErrClosed", r)
		}
	}
	if err := q.Put(ctx, 4); !errors.Is(err, ErrClosed) {
		t.Fatalf("Put after Close = %v, want ErrClosed", err)
	}
	if q.TryPut(4) {
		t.Fatal("TryPut after Close succeeded")
	}
	// Items queued before Close are still delivered, in order.
	for want := 1; want <= 2; want++ {
		if v, err := q.Take(ctx); v != want || err != nil {
			t.Fatalf("Take after Close = %d, %v; want %d", v, err, want)
		}
	}
	for i := 0; i < 2; i++ {
		if _, err := q.Take(ctx); !errors.Is(err, ErrClosed) {
			t.Fatalf("Take on a closed, drained queue = %v, want ErrClosed", err)
		}
	}
}

// TestBlockingQueueBursts parks many consumers, then hands them a few items
// at a time: each item must reach a consumer although most stay parked.
func TestBlockingQueueBursts(t *testing.T) {
	const consumers, rounds = 64, 2000
	q := NewBlockingQueue[int](4)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	taken := make(chan int, consumers)
	var wg sync.WaitGroup
	for c := 0; c < consumers; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				v, err := q.Take(ctx)
				if err != nil {
					return
				}
				taken <- v
			}
		}()
	}
	waitFor(t, "parked consumers", func() bool { c, _ := q.Waiting(); return c == consumers })
	timeout := time.NewTimer(time.Hour)
	defer timeout.Stop()
	for r := 0; r < rounds; r++ {
		burst := r%3 + 1
		for i := 0; i < burst; i++ {
			if err := q.Put(ctx, r*10+i); err != nil {
				t.Fatal(err)
			}
		}
		timeout.Reset(5 * time.Second)
		seen := 0
		for seen < burst {
			select {
			case v := <-taken:
				if v/10 != r {
					t.Fatalf("round %d: took %d from another round", r, v)
				}
				seen++
			case <-timeout.C:
				t.Fatalf("round %d: %d of %d items taken; the rest sat in the queue (Len %d)", r, seen, burst, q.Len())
			}
		}
	}
	cancel()
	wg.Wait()
}

// TestParkedConsumersUseNoCPU parks 64 consumers on an empty queue and
// measures the process's CPU time while they wait. Polling with
// runtime.Gosched or short sleeps would burn whole cores here.
func TestParkedConsumersUseNoCPU(t *testing.T) {
	const consumers = 64
	const window = 200 * time.Millisecond
	const budget = 20 * time.Millisecond
	q := NewBlockingQueue[int](16)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for c := 0; c < consumers; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := q.Take(ctx); !errors.Is(err, context.Canceled) {
				t.Errorf("Take = %v, want context.Canceled", err)
			}
		}()
	}
	waitFor(t, "parked consumers", func() bool { c, _ := q.Waiting(); return c == consumers })
	time.Sleep(10 * time.Millisecond) // let the runtime settle

	before := cpuTime(t)
	time.Sleep(window)
	used := cpuTime(t) - before

	cancel()
	wg.Wait()
	if used > budget {
		t.Fatalf("%d parked consumers used %v of CPU in %v, want < %v", consumers, used, window, budget)
	}
	t.Logf("%d parked consumers used %v of CPU in %v", consumers, used, window)
}

func cpuTime(t *testing.T) time.Duration {
	t.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatalf("getrusage: %v", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// The tests below freeze a producer or consumer between claiming a position
// and publishing or freeing it, as if it were descheduled there. This is the
// window in which a woken goroutine finds the queue empty (full) although an
// item (room) exists behind the frozen slot, which the wake-up chaining must
// cover. settle gives woken goroutines time to act and park again; if it is
// too short the tests can only pass spuriously, never fail spuriously.
const settle = 20 * time.Millisecond

// stallEnqueue claims the next tail position as enqueue does, but publishes
// it only when the returned function is called.
func stallEnqueue[T any](t *testing.T, q *Queue[T]) (publish func(v T)) {
	t.Helper()
	pos := q.tail.Load()
	s := &q.slots[pos&q.mask]
	want := (pos >> q.shift) << 1
	if s.turn.Load() != want || !q.tail.CompareAndSwap(pos, pos+1) {
		t.Fatal("cannot claim the tail slot")
	}
	return func(v T) {
		s.val = v
		s.turn.Store(want + 1)
	}
}

// stallDequeue claims the head position as TryDequeue does, but frees the
// slot only when the returned function is called.
func stallDequeue[T any](t *testing.T, q *Queue[T]) (free func() T) {
	t.Helper()
	pos := q.head.Load()
	s := &q.slots[pos&q.mask]
	want := (pos>>q.shift)<<1 | 1
	if s.turn.Load() != want || !q.head.CompareAndSwap(pos, pos+1) {
		t.Fatal("cannot claim the head slot")
	}
	return func() T {
		v := s.val
		var zero T
		s.val = zero
		s.turn.Store(want + 1)
		return v
	}
}

func receiveAll(t *testing.T, what string, results ...<-chan takeResult) []takeResult {
	t.Helper()
	var out []takeResult
	timeout := time.After(5 * time.Second)
	for _, ch := range results {
		select {
		case r := <-ch:
			out = append(out, r)
		case <-timeout:
			t.Fatalf("%s: only %d of %d Takes returned", what, len(out), len(results))
		}
	}
	return out
}

func TestWokenConsumerBehindStalledProducer(t *testing.T) {
	ctx := context.Background()
	q := NewBlockingQueue[int](4)
	takes := []<-chan takeResult{goTake(ctx, q), goTake(ctx, q)}
	waitFor(t, "parked consumers", func() bool { c, _ := q.Waiting(); return c == 2 })
	time.Sleep(settle)

	publish := stallEnqueue(t, &q.q)      // a slow producer claims position 0
	if err := q.Put(ctx, 2); err != nil { // a fast one fills position 1 and wakes a consumer...
		t.Fatal(err)
	}
	time.Sleep(settle) // ...which finds position 0 unpublished and parks again
	publish(1)
	q.enqueued() // the slow producer's wake-up covers one item; chaining the other
	sum := 0
	for _, r := range receiveAll(t, "items behind a stalled producer", takes...) {
		sum += r.v
	}
	if sum != 3 {
		t.Fatalf("consumers took items summing to %d, want 1+2", sum)
	}
}

func TestWokenProducerBehindStalledConsumer(t *testing.T) {
	ctx := context.Background()
	q := NewBlockingQueue[int](2)
	for i := 1; i <= 2; i++ {
		if err := q.Put(ctx, i); err != nil {
			t.Fatal(err)
		}
	}
	puts := []<-chan error{goPut(ctx, q, 3), goPut(ctx, q, 4)}
	waitFor(t, "parked producers", func() bool { _, p := q.Waiting(); return p == 2 })
	time.Sleep(settle)

	free := stallDequeue(t, &q.q)                    // a slow consumer claims position 0
	if v, err := q.Take(ctx); v != 2 || err != nil { // a fast one frees position 1 and wakes a producer...
		t.Fatalf("Take = %d, %v", v, err)
	}
	time.Sleep(settle) // ...which finds position 2 (slot 0) still taken and parks again
	if v := free(); v != 1 {
		t.Fatalf("stalled dequeue got %d", v)
	}
	q.dequeued()
	timeout := time.After(5 * time.Second)
	for i, ch := range puts {
		select {
		case err := <-ch:
			if err != nil {
				t.Fatal(err)
			}
		case <-timeout:
			t.Fatalf("only %d of 2 parked Puts returned although there is room", i)
		}
	}
}

func TestCloseWithStalledProducer(t *testing.T) {
	f := func(name string, wantItems int, finish func(q *BlockingQueue[int], publish func(int))) {
		t.Helper()
		ctx := context.Background()
		q := NewBlockingQueue[int](4)
		publish := stallEnqueue(t, &q.q) // claimed before Close, published after
		q.Close()
		takes := []<-chan takeResult{goTake(ctx, q), goTake(ctx, q), goTake(ctx, q)}
		waitFor(t, "parked consumers", func() bool { c, _ := q.Waiting(); return c == 3 })
		// Closed but not drained: the Takes must park, not poll the
		// closed done channel, while the producer is stalled.
		before := cpuTime(t)
		time.Sleep(50 * time.Millisecond)
		if used := cpuTime(t) - before; used > 10*time.Millisecond {
			t.Fatalf("%s: Takes waiting for a stalled producer used %v of CPU in 50ms", name, used)
		}
		finish(q, publish)
		items, closed := 0, 0
		for _, r := range receiveAll(t, name, takes...) {
			switch {
			case r.err == nil && r.v == 7:
				items++
			case errors.Is(r.err, ErrClosed):
				closed++
			default:
				t.Fatalf("%s: Take = %+v", name, r)
			}
		}
		if items != wantItems || closed != len(takes)-wantItems {
			t.Fatalf("%s: %d items and %d ErrClosed, want %d and %d", name, items, closed, wantItems, len(takes)-wantItems)
		}
	}
	f("taken by a parked Take", 1, func(q *BlockingQueue[int], publish func(int)) {
		publish(7)
		q.enqueued()
	})
	f("taken by TryTake", 0, func(q *BlockingQueue[int], publish func(int)) {
		publish(7)
		if v, ok := q.TryTake(); !ok || v != 7 {
			t.Fatalf("TryTake = %d, %v", v, ok)
		}
		q.enqueued() // the producer's late wake-up finds nothing left
	})
}

// TestCloseWakesEveryParkedCall: Close wakes parked calls with one token
// per side, which each woken call passes on; none may be left parked,
// however many there are.
func TestCloseWakesEveryParkedCall(t *testing.T) {
	const producers, consumers = 16, 64
	ctx := context.Background()
	full := NewBlockingQueue[int](2)
	for i := 1; i <= 2; i++ {
		if err := full.Put(ctx, i); err != nil {
			t.Fatal(err)
		}
	}
	empty := NewBlockingQueue[int](2)
	var puts []<-chan error
	for i := range producers {
		puts = append(puts, goPut(ctx, full, 10+i))
	}
	var takes []<-chan takeResult
	for range consumers {
		takes = append(takes, goTake(ctx, empty))
	}
	waitFor(t, "parked calls", func() bool {
		_, p := full.Waiting()
		c, _ := empty.Waiting()
		return p == producers && c == consumers
	})
	full.Close()
	empty.Close()
	timeout := time.After(5 * time.Second)
	for i, put := range puts {
		select {
		case err := <-put:
			if !errors.Is(err, ErrClosed) {
				t.Fatalf("parked Put %d after Close = %v, want ErrClosed", i, err)
			}
		case <-timeout:
			t.Fatalf("parked Put %d still parked after Close", i)
		}
	}
	for i, take := range takes {
		select {
		case r := <-take:
			if !errors.Is(r.err, ErrClosed) {
				t.Fatalf("parked Take %d after Close = %+v, want ErrClosed", i, r)
			}
		case <-timeout:
			t.Fatalf("parked Take %d still parked after Close", i)
		}
	}
	if c, p := full.Waiting(); c != 0 || p != 0 {
		t.Errorf("full queue: %d consumers, %d producers still waiting", c, p)
	}
	if c, p := empty.Waiting(); c != 0 || p != 0 {
		t.Errorf("empty queue: %d consumers, %d producers still waiting", c, p)
	}
}
