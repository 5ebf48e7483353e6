package stages

import (
	"context"
	"fmt"
)

// ChanQueue is a bounded FIFO queue on a buffered channel, with the
// StageQueue semantics of BlockingQueue. It exists as the baseline that
// BlockingQueue is measured against (podline --queue=channel): the same
// pipeline, with the hand-off written the way most Go programs write it.
//
// Unlike BlockingQueue it has no Close: closing a channel that producers
// may still send on panics, and the pipeline does not need it, because its
// workers stop on the context.
type ChanQueue[T any] struct {
	c chan T
}

// NewChanQueue returns an empty queue holding exactly capacity items. It
// panics if capacity < 1.
func NewChanQueue[T any](capacity int) *ChanQueue[T] {
	if capacity < 1 {
		panic(fmt.Sprintf("BUG: queue capacity must be at least 1, got %d", capacity))
	}
	return &ChanQueue[T]{c: make(chan T, capacity)}
}

// Put adds v, parking while the queue is full. It returns ctx.Err() if ctx
// ends first. If there is room, Put succeeds without looking at ctx.
func (q *ChanQueue[T]) Put(ctx context.Context, v T) error {
	// Try first: a select that sees both room and a done ctx picks one at
	// random, and BlockingQueue prefers the room.
	select {
	case q.c <- v:
		return nil
	default:
	}
	select {
	case q.c <- v:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// TryPut adds v if there is room, without parking.
func (q *ChanQueue[T]) TryPut(v T) bool {
	select {
	case q.c <- v:
		return true
	default:
		return false
	}
}

// Take removes and returns the oldest item, parking while the queue is
// empty. It returns ctx.Err() if ctx ends first. If an item is ready, Take
// returns it without looking at ctx.
func (q *ChanQueue[T]) Take(ctx context.Context) (T, error) {
	select {
	case v := <-q.c:
		return v, nil
	default:
	}
	select {
	case v := <-q.c:
		return v, nil
	case <-ctx.Done():
		var zero T
		return zero, ctx.Err()
	}
}

// TryTake removes and returns the oldest item if there is one, without
// parking.
func (q *ChanQueue[T]) TryTake() (T, bool) {
	select {
	case v := <-q.c:
		return v, true
	default:
		var zero T
		return zero, false
	}
}

// Len returns the number of items queued.
func (q *ChanQueue[T]) Len() int { return len(q.c) }

// Cap returns the capacity.
func (q *ChanQueue[T]) Cap() int { return cap(q.c) }
