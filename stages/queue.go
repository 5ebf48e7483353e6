package stages

// Queue is the bounded hand-off between pipeline stages. Every pod update in
// podline crosses several of them, so the queue must not take a lock, must not
// allocate, and must not make cores fight over cache lines.
//
// Design (after Dmitry Vyukov's bounded MPMC queue): a ring of slots, each
// carrying its own turn number, plus two monotonically growing positions,
// tail (next enqueue) and head (next dequeue). Position pos lives in slot
// pos&mask during lap pos>>shift. A slot's turn is 2*lap while it waits for
// the enqueue of that lap and 2*lap+1 while it holds that lap's item. A
// producer claims a position with one CAS on tail once the slot's turn says
// "empty for my lap", writes the value, then publishes it by storing the next
// turn; a consumer mirrors this on head. So producers only contend with
// producers, consumers with consumers, and the two sides meet only on the slot
// being handed over. Two turns per lap (rather than Vyukov's pos / pos+1)
// keep "full" and "free for the next lap" distinct even at capacity 1.
//
// The turn is compared with the wanted one as a signed difference: negative
// means the slot is still a lap behind (full, or empty for a consumer),
// positive means another goroutine already took this position and ours is
// stale. An unsigned difference can never be negative, and would spin instead
// of reporting full/empty.
//
// The hot fields (tail, head, each slot's turn and value) are kept at least
// 56 bytes apart. With everything 8-byte aligned this is enough for no two of
// them to ever share a 64-byte cache line, whatever the size of T, so a
// producer publishing slot i does not invalidate the line a consumer is
// reading in slot i+1. (Go cannot size an array by unsafe.Sizeof of a type
// parameter, so padding every slot to an exact multiple of 64 is impossible
// for generic T; the 56-byte gap is the property that matters.)

import (
	"fmt"
	"math/bits"
	"sync/atomic"
)

const cacheLine = 64

// closedBit is set in tail by close: no enqueue can claim a position after
// it, which makes closing linearizable with respect to enqueues.
const closedBit = uint64(1) << 63

type slot[T any] struct {
	turn atomic.Uint64
	val  T
	_    [cacheLine - 8]byte
}

// Queue is a bounded lock-free multi-producer multi-consumer FIFO queue.
// The zero value is not usable; create one with NewQueue.
//
// A goroutine that is descheduled between claiming a position and publishing
// it holds up the goroutines behind it on that slot (they see the queue as
// full or empty until it resumes); nothing else blocks.
type Queue[T any] struct {
	slots []slot[T]
	mask  uint64
	shift uint
	_     [cacheLine - 8]byte
	tail  atomic.Uint64 // next position to enqueue; closedBit once closed
	_     [cacheLine - 8]byte
	head  atomic.Uint64 // next position to dequeue
	_     [cacheLine - 8]byte
}

// NewQueue returns an empty queue holding at least capacity items; the
// capacity is rounded up to a power of two.
func NewQueue[T any](capacity int) *Queue[T] {
	q := &Queue[T]{}
	q.init(capacity)
	return q
}

func (q *Queue[T]) init(capacity int) {
	if capacity < 1 {
		panic(fmt.Sprintf("BUG: queue capacity must be at least 1, got %d", capacity))
	}
	shift := uint(bits.Len64(uint64(capacity - 1)))
	n := uint64(1) << shift
	// Turns start at 0: every slot empty and waiting for lap 0.
	q.slots = make([]slot[T], n)
	q.mask = n - 1
	q.shift = shift
}

// TryEnqueue adds v at the tail. It returns false, without blocking, if the
// queue is full (which includes the moment when the slot it needs is still
// being emptied by a consumer).
func (q *Queue[T]) TryEnqueue(v T) bool {
	ok, _ := q.enqueue(v)
	return ok
}

// enqueue reports closed when close has been called; the item is not added.
func (q *Queue[T]) enqueue(v T) (ok, closed bool) {
	pos := q.tail.Load()
	for {
		if pos&closedBit != 0 {
			return false, true
		}
		s := &q.slots[pos&q.mask]
		want := (pos >> q.shift) << 1
		switch d := int64(s.turn.Load() - want); {
		case d == 0:
			if q.tail.CompareAndSwap(pos, pos+1) {
				s.val = v
				s.turn.Store(want + 1) // publish
				return true, false
			}
			pos = q.tail.Load()
		case d < 0:
			// The slot still holds (or is handing out) the previous lap's
			// item: the queue is full.
			return false, false
		default:
			// Another producer already took pos.
			pos = q.tail.Load()
		}
	}
}

// TryDequeue removes and returns the item at the head. It returns false,
// without blocking, if the queue is empty (which includes the moment when the
// item at the head is still being published by its producer).
func (q *Queue[T]) TryDequeue() (T, bool) {
	pos := q.head.Load()
	for {
		s := &q.slots[pos&q.mask]
		want := (pos>>q.shift)<<1 | 1
		switch d := int64(s.turn.Load() - want); {
		case d == 0:
			if q.head.CompareAndSwap(pos, pos+1) {
				v := s.val
				var zero T
				s.val = zero           // do not keep the item reachable
				s.turn.Store(want + 1) // free the slot for the next lap
				return v, true
			}
			pos = q.head.Load()
		case d < 0:
			// Nothing published at pos yet: empty, or its producer is
			// between claim and publish.
			var zero T
			return zero, false
		default:
			// Another consumer already took pos.
			pos = q.head.Load()
		}
	}
}

// headReady reports whether the item at the head is published, so that a
// TryDequeue now would find it (unless another consumer takes it first). It
// reads only the head and its slot, lines a consumer touches anyway, and not
// the tail that producers keep writing.
func (q *Queue[T]) headReady() bool {
	pos := q.head.Load()
	want := (pos>>q.shift)<<1 | 1
	return q.slots[pos&q.mask].turn.Load() == want
}

// tailFree reports whether the slot at the tail is free for its lap, so that
// an enqueue now would find room (unless another producer takes it first).
func (q *Queue[T]) tailFree() bool {
	pos := q.tail.Load()
	want := (pos >> q.shift) << 1
	return pos&closedBit == 0 && q.slots[pos&q.mask].turn.Load() == want
}

// Len returns the number of items in the queue. Under concurrent use it is a
// snapshot that may be stale by the time it returns, but it is always within
// [0, Cap()]. Positions claimed but not yet published or freed are counted.
func (q *Queue[T]) Len() int {
	n, _ := q.count()
	return n
}

// count returns Len and whether close was called, from one read of each
// position. Once closed, the tail is frozen, so closed with n == 0 means
// drained: every enqueued position has been claimed by a dequeue, and stays
// so.
func (q *Queue[T]) count() (n int, closed bool) {
	// Load head first: tail only grows and never passes head+Cap at any
	// instant, so a later tail is >= this head; it may exceed head+Cap
	// because of the gap between the two loads, hence the clamp.
	h := q.head.Load()
	t := q.tail.Load()
	d := t&^closedBit - h
	if d > uint64(len(q.slots)) {
		d = uint64(len(q.slots))
	}
	return int(d), t&closedBit != 0
}

// Cap returns the capacity: the requested one rounded up to a power of two.
func (q *Queue[T]) Cap() int {
	return len(q.slots)
}

// close makes every later enqueue fail with closed. Items already in the
// queue, or being published, stay dequeueable.
func (q *Queue[T]) close() {
	q.tail.Or(closedBit)
}
