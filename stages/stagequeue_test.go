package stages

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// quiet is how long a call must stay parked for the tests to call it
// parked. Too short can only let a test pass spuriously, never fail.
const quiet = 20 * time.Millisecond

func stillParked[R any](t *testing.T, what string, ch <-chan R) {
	t.Helper()
	select {
	case r := <-ch:
		t.Fatalf("%s returned %+v, want it parked", what, r)
	case <-time.After(quiet):
	}
}

func received[R any](t *testing.T, what string, ch <-chan R) R {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(5 * time.Second):
		t.Fatalf("%s still parked", what)
		panic("unreachable")
	}
}

func goTakeFrom(ctx context.Context, q StageQueue[int]) <-chan takeResult {
	ch := make(chan takeResult, 1)
	go func() {
		v, err := q.Take(ctx)
		ch <- takeResult{v, err}
	}()
	return ch
}

func goPutTo(ctx context.Context, q StageQueue[int], v int) <-chan error {
	ch := make(chan error, 1)
	go func() { ch <- q.Put(ctx, v) }()
	return ch
}

// TestStageQueueSemantics holds every StageQueue implementation to the same
// contract: bounded FIFO, Put and Take park, TryPut never does, a done ctx
// ends a parked call but does not stop one that can proceed.
func TestStageQueueSemantics(t *testing.T) {
	f := func(k QueueKind) {
		t.Helper()
		ctx := context.Background()
		q := newStageQueue[int](k, 2)
		if q.Cap() != 2 || q.Len() != 0 {
			t.Fatalf("%s: Cap, Len = %d, %d; want 2, 0", k, q.Cap(), q.Len())
		}
		if !q.TryPut(1) || !q.TryPut(2) {
			t.Fatalf("%s: TryPut into an empty queue failed", k)
		}
		if q.TryPut(99) {
			t.Fatalf("%s: TryPut into a full queue succeeded", k)
		}
		if q.Len() != 2 {
			t.Fatalf("%s: Len = %d, want 2", k, q.Len())
		}

		put := goPutTo(ctx, q, 3)
		stillParked(t, k.String()+": Put into a full queue", put)
		if v, err := q.Take(ctx); v != 1 || err != nil {
			t.Fatalf("%s: Take = %d, %v; want 1", k, v, err)
		}
		if err := received(t, k.String()+": Put after a Take made room", put); err != nil {
			t.Fatalf("%s: released Put = %v", k, err)
		}
		for want := 2; want <= 3; want++ {
			if v, err := q.Take(ctx); v != want || err != nil {
				t.Fatalf("%s: Take = %d, %v; want %d (FIFO)", k, v, err, want)
			}
		}

		take := goTakeFrom(ctx, q)
		stillParked(t, k.String()+": Take from an empty queue", take)
		if !q.TryPut(4) {
			t.Fatalf("%s: TryPut with a parked Take failed", k)
		}
		if r := received(t, k.String()+": Take after a Put", take); r.v != 4 || r.err != nil {
			t.Fatalf("%s: parked Take = %+v, want 4", k, r)
		}

		// A ctx that ends releases parked calls and leaves nothing behind.
		cctx, cancel := context.WithCancel(ctx)
		take = goTakeFrom(cctx, q)
		stillParked(t, k.String()+": Take from an empty queue", take)
		cancel()
		if r := received(t, k.String()+": cancelled Take", take); !errors.Is(r.err, context.Canceled) {
			t.Fatalf("%s: cancelled Take = %+v, want context.Canceled", k, r)
		}
		q.TryPut(5)
		q.TryPut(6)
		cctx, cancel = context.WithCancel(ctx)
		put = goPutTo(cctx, q, 7)
		stillParked(t, k.String()+": Put into a full queue", put)
		cancel()
		if err := received(t, k.String()+": cancelled Put", put); !errors.Is(err, context.Canceled) {
			t.Fatalf("%s: cancelled Put = %v, want context.Canceled", k, err)
		}
		if q.Len() != 2 {
			t.Fatalf("%s: Len = %d after a cancelled Put, want 2", k, q.Len())
		}

		// With an item or room at hand, a done ctx does not matter.
		if v, err := q.Take(cctx); v != 5 || err != nil {
			t.Fatalf("%s: Take of a ready item with a done ctx = %d, %v; want 5", k, v, err)
		}
		if err := q.Put(cctx, 8); err != nil {
			t.Fatalf("%s: Put with room and a done ctx = %v", k, err)
		}
		for want := 6; want <= 8; want += 2 {
			if v, err := q.Take(ctx); v != want || err != nil {
				t.Fatalf("%s: Take = %d, %v; want %d", k, v, err, want)
			}
		}
	}
	for _, k := range QueueKinds() {
		f(k)
	}
}

// TestStageQueueStress runs producers × consumers through every
// implementation with blocking Put and Take: every item is taken exactly
// once, and in order per producer.
func TestStageQueueStress(t *testing.T) {
	f := func(k QueueKind, producers, consumers, perProducer, capacity int) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		q := newStageQueue[int](k, capacity)
		total := int64(producers * perProducer)
		var taken atomic.Int64
		var mu sync.Mutex
		var sent, got checksum
		var failure atomic.Value
		var wg sync.WaitGroup
		done := make(chan struct{})
		for range consumers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				var mine checksum
				order := orderChecker{}
				for {
					v, err := q.Take(ctx)
					if err != nil {
						break
					}
					if !order.ok(uint64(v)) {
						failure.CompareAndSwap(nil, "item arrived out of order")
					}
					mine.add(uint64(v))
					if taken.Add(1) == total {
						close(done)
					}
				}
				mu.Lock()
				got.merge(mine)
				mu.Unlock()
			}()
		}
		for p := range producers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				var mine checksum
				for i := range perProducer {
					v := int(stressItem(p, i))
					if err := q.Put(ctx, v); err != nil {
						failure.CompareAndSwap(nil, "Put: "+err.Error())
						break
					}
					mine.add(uint64(v))
				}
				mu.Lock()
				sent.merge(mine)
				mu.Unlock()
			}()
		}
		select {
		case <-done:
		case <-ctx.Done():
		}
		cancel() // releases the consumers parked on the empty queue
		wg.Wait()
		if msg := failure.Load(); msg != nil {
			t.Fatalf("%s %d×%d cap %d: %s", k, producers, consumers, capacity, msg)
		}
		if got != sent || sent.count != uint64(total) {
			t.Fatalf("%s %d×%d cap %d: consumers saw %+v, producers put %+v, want %d items",
				k, producers, consumers, capacity, got, sent, total)
		}
	}
	for _, k := range QueueKinds() {
		f(k, 8, 8, 5000, 64)
		f(k, 4, 4, 5000, 1)
	}
}

func TestChanQueueCapacityIsExact(t *testing.T) {
	for _, c := range []int{1, 3, 1000} {
		if got := NewChanQueue[int](c).Cap(); got != c {
			t.Fatalf("Cap = %d, want %d", got, c)
		}
	}
	defer func() {
		if recover() == nil {
			t.Fatal("NewChanQueue(0) did not panic")
		}
	}()
	NewChanQueue[int](0)
}

func TestQueueKindNames(t *testing.T) {
	for _, k := range QueueKinds() {
		got, err := ParseQueueKind(k.String())
		if err != nil || got != k {
			t.Fatalf("ParseQueueKind(%q) = %v, %v; want %v", k.String(), got, err, k)
		}
	}
	if k, err := ParseQueueKind("LockFree"); err == nil {
		t.Fatalf("ParseQueueKind accepted %q as %v", "LockFree", k)
	}
	if QueueKind(0) != QueueLockFree {
		t.Fatal("the zero QueueKind is not the lock-free queue")
	}
	var handlers [NumStages]Handler
	for s := range handlers {
		handlers[s] = HandlerFunc(func(*Work) Outcome { return Next() })
	}
	_, err := New(Config{Window: 1, Workers: [NumStages]int{1, 1, 1, 1, 1}, Handlers: handlers, Queue: numQueueKinds})
	if err == nil {
		t.Fatal("New accepted an unknown queue kind")
	}
}
