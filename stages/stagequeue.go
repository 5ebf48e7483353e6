package stages

import (
	"context"
	"fmt"
)

// StageQueue is what the pipeline needs from the hand-off in front of a
// stage: bounded, a Take that parks a worker until work arrives, and a
// TryPut that never blocks (the window guarantees room, see the package
// doc). Put is the blocking form: the pipeline falls back to it for the
// moment a lock-free ring refuses although the window left room.
//
// Two implementations exist so the lock-free design can be measured against
// the obvious one: BlockingQueue (the default) and ChanQueue. Neither is
// closed by the pipeline: workers stop when the pipeline's context ends.
type StageQueue[T any] interface {
	// Put adds v, parking while the queue is full, until ctx ends.
	Put(ctx context.Context, v T) error
	// TryPut adds v if there is room, without parking.
	TryPut(v T) bool
	// Take removes the oldest item, parking while the queue is empty,
	// until ctx ends.
	Take(ctx context.Context) (T, error)
	// Len is the number of items queued, a snapshot within [0, Cap()].
	Len() int
	// Cap is the capacity, at least the one asked for.
	Cap() int
}

var (
	_ StageQueue[int] = (*BlockingQueue[int])(nil)
	_ StageQueue[int] = (*ChanQueue[int])(nil)
)

// QueueKind chooses the StageQueue implementation of a pipeline. The zero
// value is the lock-free queue.
type QueueKind uint8

const (
	// QueueLockFree is BlockingQueue: a lock-free ring with parking.
	QueueLockFree QueueKind = iota
	// QueueChannel is ChanQueue: a buffered Go channel, the baseline the
	// benchmarks compare with.
	QueueChannel
	numQueueKinds
)

var queueKindNames = [numQueueKinds]string{"lockfree", "channel"}

// QueueKinds lists every kind, for tests and benchmarks that cover all.
func QueueKinds() []QueueKind { return []QueueKind{QueueLockFree, QueueChannel} }

func (k QueueKind) String() string {
	if k < numQueueKinds {
		return queueKindNames[k]
	}
	return fmt.Sprintf("QueueKind(%d)", uint8(k))
}

// ParseQueueKind turns a name ("lockfree", "channel") into a QueueKind.
func ParseQueueKind(name string) (QueueKind, error) {
	for k, n := range queueKindNames {
		if n == name {
			return QueueKind(k), nil
		}
	}
	return 0, fmt.Errorf("unknown queue kind %q (want lockfree or channel)", name)
}

// newStageQueue returns an empty queue of kind k holding at least capacity
// items.
func newStageQueue[T any](k QueueKind, capacity int) StageQueue[T] {
	switch k {
	case QueueChannel:
		return NewChanQueue[T](capacity)
	case QueueLockFree:
		return NewBlockingQueue[T](capacity)
	}
	panic(fmt.Sprintf("BUG: unknown queue kind %d", k))
}
