package stages

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"
)

func TestQueueCapacityRounding(t *testing.T) {
	f := func(requested, want int) {
		t.Helper()
		q := NewQueue[int](requested)
		if got := q.Cap(); got != want {
			t.Fatalf("NewQueue(%d).Cap() = %d, want %d", requested, got, want)
		}
		// The rounded capacity is usable in full, and no more.
		for i := 0; i < want; i++ {
			if !q.TryEnqueue(i) {
				t.Fatalf("cap %d: enqueue %d failed", want, i)
			}
		}
		if q.TryEnqueue(-1) {
			t.Fatalf("cap %d: enqueue into a full queue succeeded", want)
		}
	}
	f(1, 1)
	f(2, 2)
	f(3, 4)
	f(5, 8)
	f(8, 8)
	f(1000, 1024)
	f(1024, 1024)
	f(1025, 2048)
}

func TestNewQueuePanicsOnBadCapacity(t *testing.T) {
	f := func(capacity int) {
		t.Helper()
		defer func() {
			t.Helper()
			r := recover()
			msg, _ := r.(string)
			if !strings.HasPrefix(msg, "BUG: ") {
				t.Fatalf("NewQueue(%d) panic = %v, want a BUG: message", capacity, r)
			}
		}()
		NewQueue[int](capacity)
	}
	f(0)
	f(-1)
}

func TestQueueFIFOAndBoundaries(t *testing.T) {
	f := func(capacity int) {
		t.Helper()
		q := NewQueue[int](capacity)
		if _, ok := q.TryDequeue(); ok {
			t.Fatalf("cap %d: dequeue from a new queue succeeded", capacity)
		}
		for i := 0; i < capacity; i++ {
			if !q.TryEnqueue(i * 10) {
				t.Fatalf("cap %d: enqueue %d failed", capacity, i)
			}
			if q.Len() != i+1 {
				t.Fatalf("cap %d: Len = %d after %d enqueues", capacity, q.Len(), i+1)
			}
		}
		if q.TryEnqueue(99) {
			t.Fatalf("cap %d: enqueue into a full queue succeeded", capacity)
		}
		for i := 0; i < capacity; i++ {
			v, ok := q.TryDequeue()
			if !ok || v != i*10 {
				t.Fatalf("cap %d: dequeue %d = %d, %v; want %d, true", capacity, i, v, ok, i*10)
			}
		}
		if v, ok := q.TryDequeue(); ok {
			t.Fatalf("cap %d: dequeue from an empty queue = %d, true", capacity, v)
		}
		if q.Len() != 0 {
			t.Fatalf("cap %d: Len = %d when empty", capacity, q.Len())
		}
	}
	f(1)
	f(2)
	f(4)
	f(64)
}

// TestQueueWrapAround runs the ring through many laps at every fill level and
// compares it with a slice.
func TestQueueWrapAround(t *testing.T) {
	f := func(capacity, laps int) {
		t.Helper()
		q := NewQueue[int](capacity)
		var model []int
		next := 0
		for step := 0; step < laps*capacity; step++ {
			// Alternate bursts of enqueues and dequeues of varying length
			// so every position is seen at every fill level.
			burst := step%(capacity+1) + 1
			for i := 0; i < burst; i++ {
				ok := q.TryEnqueue(next)
				if want := len(model) < capacity; ok != want {
					t.Fatalf("cap %d step %d: enqueue = %v with %d queued", capacity, step, ok, len(model))
				}
				if ok {
					model = append(model, next)
					next++
				}
			}
			for i := 0; i < burst-step%2; i++ {
				v, ok := q.TryDequeue()
				if want := len(model) > 0; ok != want {
					t.Fatalf("cap %d step %d: dequeue ok = %v with %d queued", capacity, step, ok, len(model))
				}
				if ok {
					if v != model[0] {
						t.Fatalf("cap %d step %d: dequeue = %d, want %d", capacity, step, v, model[0])
					}
					model = model[1:]
				}
			}
			if q.Len() != len(model) {
				t.Fatalf("cap %d step %d: Len = %d, want %d", capacity, step, q.Len(), len(model))
			}
		}
		if next < laps*capacity {
			t.Fatalf("cap %d: only %d items went through, want at least %d laps", capacity, next, laps)
		}
	}
	f(1, 1000)
	f(2, 1000)
	f(8, 500)
	f(64, 100)
}

func TestQueueDequeueZeroesSlot(t *testing.T) {
	q := NewQueue[*[1 << 10]byte](4)
	for lap := 0; lap < 3; lap++ {
		for i := 0; i < q.Cap(); i++ {
			if !q.TryEnqueue(new([1 << 10]byte)) {
				t.Fatal("enqueue failed")
			}
		}
		for i := 0; i < q.Cap(); i++ {
			if v, ok := q.TryDequeue(); !ok || v == nil {
				t.Fatalf("dequeue = %p, %v", v, ok)
			}
		}
		for i := range q.slots {
			if q.slots[i].val != nil {
				t.Fatalf("lap %d: slot %d still references a dequeued item", lap, i)
			}
		}
	}
}

// TestQueueLayout checks that the fields written by different goroutines
// are at least 56 bytes apart. Everything is 8-byte aligned, so the last
// byte of one field is at 7 mod 8 and the next field starts at least 57 bytes
// later, which is always on a later 64-byte line.
func TestQueueLayout(t *testing.T) {
	const minGap = cacheLine - 8
	f := func(name string, size, valOffset, valSize uintptr) {
		t.Helper()
		used := valOffset + valSize
		if size < cacheLine || size%8 != 0 || size-used < minGap {
			t.Fatalf("slot[%s]: size %d, used %d: want >= %d bytes of padding after the value",
				name, size, used, minGap)
		}
		// Walk a ring from a 64-byte aligned base (a large slice's case)
		// and from every other 8-byte offset.
		for base := uintptr(0); base < cacheLine; base += 8 {
			for i := uintptr(0); i < 64; i++ {
				lastLine := (base + i*size + used - 1) / cacheLine
				nextLine := (base + (i+1)*size) / cacheLine
				if lastLine == nextLine {
					t.Fatalf("slot[%s]: slots %d and %d share a cache line (base %d)", name, i, i+1, base)
				}
			}
		}
	}
	var sp slot[*int]
	f("*int", unsafe.Sizeof(sp), unsafe.Offsetof(sp.val), unsafe.Sizeof(sp.val))
	if unsafe.Sizeof(sp) != 72 {
		t.Fatalf("slot[*int] is %d bytes, want 72 (8 turn + 8 value + 56 padding)", unsafe.Sizeof(sp))
	}
	var sb slot[byte]
	f("byte", unsafe.Sizeof(sb), unsafe.Offsetof(sb.val), unsafe.Sizeof(sb.val))
	var ss slot[string]
	f("string", unsafe.Sizeof(ss), unsafe.Offsetof(ss.val), unsafe.Sizeof(ss.val))
	var s3 slot[[3]byte]
	f("[3]byte", unsafe.Sizeof(s3), unsafe.Offsetof(s3.val), unsafe.Sizeof(s3.val))
	var sl slot[[100]byte]
	f("[100]byte", unsafe.Sizeof(sl), unsafe.Offsetof(sl.val), unsafe.Sizeof(sl.val))

	var q Queue[int]
	roEnd := unsafe.Offsetof(q.shift) + unsafe.Sizeof(q.shift)
	tail := unsafe.Offsetof(q.tail)
	head := unsafe.Offsetof(q.head)
	if tail-roEnd < minGap || head-(tail+8) < minGap || unsafe.Sizeof(q)-(head+8) < minGap {
		t.Fatalf("Queue layout: read-only fields end at %d, tail at %d, head at %d, size %d: want %d-byte gaps",
			roEnd, tail, head, unsafe.Sizeof(q), minGap)
	}
	var b BlockingQueue[int]
	cons := unsafe.Offsetof(b.consumers)
	prod := unsafe.Offsetof(b.producers)
	if cons < unsafe.Sizeof(q) || prod-(cons+8) < minGap || unsafe.Offsetof(b.items)-(prod+8) < minGap {
		t.Fatalf("BlockingQueue layout: consumers at %d, producers at %d, items at %d: want %d-byte gaps",
			cons, prod, unsafe.Offsetof(b.items), minGap)
	}
}

func TestQueueLenBoundsUnderLoad(t *testing.T) {
	q := NewQueue[int](8)
	var stop atomic.Bool
	var wg sync.WaitGroup
	for w := 0; w < 2; w++ {
		wg.Add(2)
		go func() {
			defer wg.Done()
			for i := 0; !stop.Load(); i++ {
				q.TryEnqueue(i)
			}
		}()
		go func() {
			defer wg.Done()
			for !stop.Load() {
				q.TryDequeue()
			}
		}()
	}
	for i := 0; i < 200000; i++ {
		n := q.Len()
		if n < 0 || n > q.Cap() {
			stop.Store(true)
			wg.Wait()
			t.Fatalf("Len = %d, outside [0, %d]", n, q.Cap())
		}
	}
	stop.Store(true)
	wg.Wait()
}

// checksum accumulates what one side of a stress test saw.
type checksum struct {
	count, sum, xor uint64
}

func (c *checksum) add(v uint64) {
	c.count++
	c.sum += v
	c.xor ^= v * 0x9e3779b97f4a7c15 // spread bits so swapped values show
}

func (c *checksum) merge(o checksum) {
	c.count += o.count
	c.sum += o.sum
	c.xor ^= o.xor
}

// stressItem encodes producer p's i-th item; producers send disjoint ranges.
func stressItem(p, i int) uint64 { return uint64(p)<<32 | uint64(i) }

// orderChecker checks that a consumer sees each producer's items in the
// order they were sent: positions are claimed in order by each producer and
// taken in order by each consumer.
type orderChecker map[uint64]uint64

func (o orderChecker) ok(v uint64) bool {
	p, i := v>>32, v&(1<<32-1)
	last, seen := o[p]
	o[p] = i
	return !seen || i > last
}

func TestQueueStress(t *testing.T) {
	f := func(producers, consumers, perProducer, capacity int) {
		t.Helper()
		q := NewQueue[uint64](capacity)
		want := checksum{}
		for p := 0; p < producers; p++ {
			for i := 0; i < perProducer; i++ {
				want.add(stressItem(p, i))
			}
		}
		total := uint64(producers * perProducer)
		var taken atomic.Uint64
		var mu sync.Mutex
		var got checksum
		var orderErr atomic.Value
		var wg sync.WaitGroup
		for p := 0; p < producers; p++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < perProducer; i++ {
					for !q.TryEnqueue(stressItem(p, i)) {
						runtime.Gosched() // the test's own retry; Queue never blocks
					}
				}
			}()
		}
		for c := 0; c < consumers; c++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				var mine checksum
				order := orderChecker{}
				for taken.Load() < total {
					v, ok := q.TryDequeue()
					if !ok {
						runtime.Gosched()
						continue
					}
					if !order.ok(v) {
						orderErr.Store(fmt.Sprintf("item %#x arrived out of order", v))
					}
					mine.add(v)
					taken.Add(1)
				}
				mu.Lock()
				got.merge(mine)
				mu.Unlock()
			}()
		}
		wg.Wait()
		if e := orderErr.Load(); e != nil {
			t.Fatalf("%d×%d: %s", producers, consumers, e)
		}
		if got != want {
			t.Fatalf("%d×%d cap %d: consumers saw %+v, producers sent %+v", producers, consumers, capacity, got, want)
		}
		if q.Len() != 0 {
			t.Fatalf("%d×%d: Len = %d after draining", producers, consumers, q.Len())
		}
	}
	f(8, 8, 20000, 64)
	f(1, 8, 100000, 64)
	f(8, 1, 20000, 64)
	f(4, 4, 20000, 1)
	f(4, 4, 20000, 2)
}

// blockingStress runs producers × consumers through a BlockingQueue. If
// closeEarly, Close races with the producers, which stop at ErrClosed; every
// Put that succeeded must still be taken exactly once.
func blockingStress(t *testing.T, producers, consumers, perProducer, capacity int, closeEarly bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	q := NewBlockingQueue[uint64](capacity)

	var sentMu sync.Mutex
	var sent, got checksum
	var failure atomic.Value
	fail := func(msg string) { failure.CompareAndSwap(nil, msg) }

	var puts atomic.Int64
	var prodWG, consWG sync.WaitGroup
	for c := 0; c < consumers; c++ {
		consWG.Add(1)
		go func() {
			defer consWG.Done()
			var mine checksum
			order := orderChecker{}
			for {
				v, err := q.Take(ctx)
				if errors.Is(err, ErrClosed) {
					break
				}
				if err != nil {
					fail("Take: " + err.Error() + " (lost wakeup?)")
					return
				}
				if !order.ok(v) {
					fail("item arrived out of order")
				}
				mine.add(v)
			}
			sentMu.Lock()
			got.merge(mine)
			sentMu.Unlock()
		}()
	}
	for p := 0; p < producers; p++ {
		prodWG.Add(1)
		go func() {
			defer prodWG.Done()
			var mine checksum
			for i := 0; i < perProducer; i++ {
				v := stressItem(p, i)
				err := q.Put(ctx, v)
				if closeEarly && errors.Is(err, ErrClosed) {
					break
				}
				if err != nil {
					fail("Put: " + err.Error())
					return
				}
				mine.add(v)
				puts.Add(1)
			}
			sentMu.Lock()
			sent.merge(mine)
			sentMu.Unlock()
		}()
	}
	if closeEarly {
		// Close while producers are still going.
		waitFor(t, "some items", func() bool { return puts.Load() > 100 || failure.Load() != nil })
	} else {
		prodWG.Wait()
	}
	q.Close()
	prodWG.Wait()
	consWG.Wait()
	if msg := failure.Load(); msg != nil {
		t.Fatalf("%d×%d cap %d: %s", producers, consumers, capacity, msg)
	}
	if got != sent {
		t.Fatalf("%d×%d cap %d: consumers saw %+v, producers put %+v", producers, consumers, capacity, got, sent)
	}
	if !closeEarly && sent.count != uint64(producers*perProducer) {
		t.Fatalf("%d×%d: %d items put, want %d", producers, consumers, sent.count, producers*perProducer)
	}
	if c, p := q.Waiting(); c != 0 || p != 0 {
		t.Fatalf("%d×%d: Waiting = %d, %d at the end", producers, consumers, c, p)
	}
}

func TestBlockingQueueStress(t *testing.T) {
	blockingStress(t, 8, 8, 10000, 64, false)
	blockingStress(t, 1, 8, 50000, 64, false)
	blockingStress(t, 8, 1, 10000, 64, false)
}

// TestBlockingQueueNoLostWakeup makes nearly every operation park: one slot,
// four goroutines on each side. A lost wakeup leaves a goroutine parked
// forever and shows up as the context deadline.
func TestBlockingQueueNoLostWakeup(t *testing.T) {
	blockingStress(t, 4, 4, 25000, 1, false)
	blockingStress(t, 4, 4, 5000, 2, false)
}

// TestBlockingQueuePipelineShapes runs the producer and consumer counts of
// the pipeline's stage queues (far more goroutines than CPUs) through small
// queues, so that most calls take the slow path: yield once, register, park,
// and be woken by a producer's token or a chained one. A lost wake-up shows
// as the context deadline, a reordering as an out-of-order item, a lost or
// doubled item in the checksums.
func TestBlockingQueuePipelineShapes(t *testing.T) {
	for _, sh := range handoffShapes {
		blockingStress(t, sh.prod, sh.cons, 40000/sh.prod, 2, false)
		blockingStress(t, sh.prod, sh.cons, 40000/sh.prod, 1, true)
	}
}

func TestBlockingQueueCloseRacesPut(t *testing.T) {
	for i := 0; i < 20; i++ {
		blockingStress(t, 4, 4, 100000, 4, true)
	}
}

// TestQueueHeadReadyTailFree: the wake-up chain of BlockingQueue relies on
// headReady and tailFree telling a claimed but unfinished position from a
// ready one.
func TestQueueHeadReadyTailFree(t *testing.T) {
	q := NewQueue[int](2)
	if q.headReady() || !q.tailFree() {
		t.Fatalf("empty: headReady, tailFree = %v, %v; want false, true", q.headReady(), q.tailFree())
	}
	publish := stallEnqueue(t, q)
	if q.headReady() {
		t.Fatal("headReady with the head claimed but not published")
	}
	publish(1)
	if !q.headReady() {
		t.Fatal("not headReady with the head published")
	}
	if !q.TryEnqueue(2) {
		t.Fatal("enqueue failed")
	}
	if q.tailFree() {
		t.Fatal("tailFree with the queue full")
	}
	free := stallDequeue(t, q)
	if q.tailFree() {
		t.Fatal("tailFree with the tail's slot claimed by a consumer but not freed")
	}
	if v := free(); v != 1 {
		t.Fatalf("dequeue got %d, want 1", v)
	}
	if !q.tailFree() || !q.headReady() {
		t.Fatalf("one item of two: headReady, tailFree = %v, %v; want true, true", q.headReady(), q.tailFree())
	}
	q.close()
	if q.tailFree() {
		t.Fatal("tailFree after close")
	}
}
