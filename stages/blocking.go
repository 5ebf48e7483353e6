package stages

// BlockingQueue puts parking around Queue: a stage worker with nothing to do
// sleeps until an item arrives, and a producer facing a full queue sleeps
// until there is room, which is how backpressure travels up the pipeline.
//
// Why parking and not spinning: a node with thousands of pods is idle most of
// the time, with tens of workers per stage. A worker that polls with
// runtime.Gosched or time.Sleep burns CPU the pods paid for; a parked
// goroutine costs nothing until it is woken.
//
// Fast path: try the lock-free operation, then read the other side's waiter
// count (an atomic that only the slow path writes). While nobody is parked
// that is the whole cost.
//
// Before parking, a Take (Put) that found the queue empty (full) yields its
// P once with runtime.Gosched and tries again. Parking costs the other side a
// channel send and this side a channel receive and a reschedule; the yield
// costs one reschedule, and on a node with few CPUs and tens of workers per
// stage it usually lets the goroutine that will produce the item (or room)
// run: often the one this very goroutine just handed work to, as when a
// worker's reply comes back through a second queue. It is bounded (once per
// call), so an idle worker still parks at once and costs no CPU. Measured at
// -cpu 2 (BenchmarkStageWake, BenchmarkBlockingQueue; medians of 5 on a
// loaded machine), it cut the round trip to a single parked worker from
// about 700 to 300 ns, and an item at work=0 through a 128-slot queue from
// 250 to 80 ns; through a 1,024-slot queue it changed nothing measurable.
//
// Slow path and why no wakeup is lost: a goroutine that finds the queue empty
// (full) first registers in consumers (producers), then tries the queue again,
// and only then parks. A producer publishes its item first and reads consumers
// second. Go's atomics are sequentially consistent, so either the producer
// sees the registration and hands out a wake-up token, or the consumer's
// second try sees the item. Consumers waking producers mirror this.
//
// Parking is a select on a channel holding at most one token. A send to a
// channel with a blocked receiver wakes exactly that receiver, so one item
// wakes one parked consumer however many are parked (no herd); the select
// also watches ctx; and a token sent while nobody has parked yet waits in
// the buffer for the next one. Close wakes parked goroutines with a token
// too, rather than with a closed channel in the select: each channel a
// select watches is locked and queued on at every park and every wake-up,
// so a third one made the parked hand-off, the one every idle stage pays,
// slower than a plain channel's. Tokens are not counted: a token can be
// absorbed because one is already pending, or be spent by a consumer that
// then finds the head slot still being published by a slower producer. So
// wake-ups are chained: after taking an item, a consumer that sees the next
// item published and more parked consumers passes a token on (producers do the
// same for room). It looks only at the head and its slot, not at the tail that
// producers keep writing: a position claimed but not yet published needs no
// token from it, because its producer leaves one after publishing (it sees the
// parked consumer's registration, which came before that consumer's failed
// try). An item therefore never sits in the queue while every consumer sleeps.
// Whether the queue is closed is read from a read-mostly flag, not the tail,
// for the same reason.

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
)

// ErrClosed is returned by Put after Close, and by Take once the queue is
// closed and drained.
var ErrClosed = errors.New("queue closed")

// BlockingQueue is a bounded FIFO queue whose Put parks while the queue is
// full and whose Take parks while it is empty. It is safe for any number of
// producers and consumers. Create one with NewBlockingQueue.
type BlockingQueue[T any] struct {
	q         Queue[T]
	consumers atomic.Int64 // Takes registered in the slow path
	_         [cacheLine - 8]byte
	producers atomic.Int64 // Puts registered in the slow path
	_         [cacheLine - 8]byte
	items     chan struct{} // wake-up token for a parked consumer; cap 1
	room      chan struct{} // wake-up token for a parked producer; cap 1
	closed    atomic.Bool   // set by Close after the queue is closed; read-mostly
	closeOnce sync.Once
}

// NewBlockingQueue returns an empty queue holding at least capacity items;
// the capacity is rounded up to a power of two. It panics if capacity < 1.
func NewBlockingQueue[T any](capacity int) *BlockingQueue[T] {
	b := &BlockingQueue[T]{
		items: make(chan struct{}, 1),
		room:  make(chan struct{}, 1),
	}
	b.q.init(capacity)
	return b
}

// Put adds v, parking while the queue is full. It returns ErrClosed if the
// queue is closed, or ctx.Err() if ctx ends first. If there is room, Put
// succeeds without looking at ctx. A Put that returned nil is delivered to
// exactly one Take, even if Close runs concurrently.
func (b *BlockingQueue[T]) Put(ctx context.Context, v T) error {
	ok, closed := b.q.enqueue(v)
	if ok {
		b.enqueued()
		return nil
	}
	if closed {
		return ErrClosed
	}
	return b.putSlow(ctx, v)
}

func (b *BlockingQueue[T]) putSlow(ctx context.Context, v T) error {
	// Yield once before parking: see the comment at the top.
	runtime.Gosched()
	if ok, closed := b.q.enqueue(v); ok {
		b.enqueued()
		return nil
	} else if closed {
		return ErrClosed
	}
	b.producers.Add(1)
	for {
		// Registered first, tried second: see the comment at the top.
		ok, closed := b.q.enqueue(v)
		if ok {
			b.producers.Add(-1)
			b.enqueued()
			return nil
		}
		if closed {
			// Producers parked below wait for a token that no consumer
			// may send: pass Close's on.
			if b.producers.Add(-1) > 0 {
				leaveToken(b.room)
			}
			return ErrClosed
		}
		select {
		case <-b.room:
		case <-ctx.Done():
			b.producers.Add(-1)
			return ctx.Err()
		}
	}
}

// TryPut adds v if there is room and the queue is open, without parking.
func (b *BlockingQueue[T]) TryPut(v T) bool {
	ok, _ := b.q.enqueue(v)
	if ok {
		b.enqueued()
	}
	return ok
}

// Take removes and returns the oldest item, parking while the queue is empty.
// It returns ctx.Err() if ctx ends first, and ErrClosed once the queue is
// closed and every item put before has been taken. If an item is ready, Take
// returns it without looking at ctx.
func (b *BlockingQueue[T]) Take(ctx context.Context) (T, error) {
	if v, ok := b.q.TryDequeue(); ok {
		b.dequeued()
		return v, nil
	}
	return b.takeSlow(ctx)
}

func (b *BlockingQueue[T]) takeSlow(ctx context.Context) (T, error) {
	// Yield once before parking: see the comment at the top.
	runtime.Gosched()
	if v, ok := b.q.TryDequeue(); ok {
		b.dequeued()
		return v, nil
	}
	b.consumers.Add(1)
	for {
		if v, ok := b.q.TryDequeue(); ok {
			b.consumers.Add(-1)
			b.dequeued()
			return v, nil
		}
		if !b.closed.Load() {
			// Not closed: the tail, which producers keep writing, need
			// not be read. A Close after this load leaves a token.
		} else if n, _ := b.q.count(); n == 0 {
			// Consumers parked below wait for a token that no producer
			// will send any more: pass Close's on.
			if b.consumers.Add(-1) > 0 {
				leaveToken(b.items)
			}
			var zero T
			return zero, ErrClosed
		}
		// Closed with items left: a Put that claimed its position before
		// Close is still publishing, and sends a token when done (we are
		// registered), or another consumer takes the last and passes
		// one on (dequeued).
		select {
		case <-b.items:
		case <-ctx.Done():
			b.consumers.Add(-1)
			var zero T
			return zero, ctx.Err()
		}
	}
}

// TryTake removes and returns the oldest item if there is one, without
// parking.
func (b *BlockingQueue[T]) TryTake() (T, bool) {
	v, ok := b.q.TryDequeue()
	if ok {
		b.dequeued()
	}
	return v, ok
}

// enqueued runs after every successful enqueue, once the item is published.
func (b *BlockingQueue[T]) enqueued() {
	if b.consumers.Load() > 0 {
		leaveToken(b.items)
	}
	// Chain: room left and producers still parked. A pending token already
	// covers it, and is cheaper to look at than the positions, which the
	// other side keeps writing.
	if b.producers.Load() > 0 && len(b.room) == 0 && b.q.tailFree() {
		leaveToken(b.room)
	}
}

// dequeued runs after every successful dequeue, once the slot is freed.
func (b *BlockingQueue[T]) dequeued() {
	if b.producers.Load() > 0 {
		leaveToken(b.room)
	}
	// Chain: items left and consumers still parked. After Close, also let
	// parked consumers re-check for the end of the queue.
	if b.consumers.Load() > 0 && len(b.items) == 0 && (b.q.headReady() || b.closed.Load()) {
		leaveToken(b.items)
	}
}

// leaveToken leaves a wake-up token unless one is already pending.
func leaveToken(c chan struct{}) {
	if len(c) > 0 {
		return // the send would fail; len is cheaper than a select
	}
	select {
	case c <- struct{}{}:
	default:
	}
}

// Close closes the queue: later Puts fail with ErrClosed, parked Puts return
// ErrClosed, and Takes return the remaining items, then ErrClosed. Close may
// be called more than once.
func (b *BlockingQueue[T]) Close() {
	b.closeOnce.Do(func() {
		b.q.close()
		b.closed.Store(true)
		// Parked goroutines wake on a token, and each passes it on to
		// the next (takeSlow, putSlow, dequeued): one wakes them all.
		leaveToken(b.items)
		leaveToken(b.room)
	})
}

// Len returns the number of items queued, within [0, Cap()].
func (b *BlockingQueue[T]) Len() int { return b.q.Len() }

// Cap returns the capacity: the requested one rounded up to a power of two.
func (b *BlockingQueue[T]) Cap() int { return b.q.Cap() }

// Waiting returns how many Takes and Puts are in the slow path, parked or
// about to park.
func (b *BlockingQueue[T]) Waiting() (consumers, producers int) {
	return int(b.consumers.Load()), int(b.producers.Load())
}
