// Package delay fires a callback per key at a chosen time, with one
// goroutine and one timer for all keys: thousands of pods in back-off, or
// containers waiting for a second look, must not cost a goroutine or a timer
// each. A key keeps only its earliest pending request.
//
// Why not client-go's delaying workqueue (k8s.io/client-go/util/workqueue,
// already a dependency): its users here need what it does not have.
//   - Cancel: a removed pod's retry and a removed container's second look
//     are dropped; the workqueue cannot take back a delayed item, so each
//     would fire for an object that is gone.
//   - Pending: Pipeline.Idle counts the retries still waiting; the
//     workqueue's Len counts only items already due.
//   - Earliest wins across a due-now request: After(k, 0) replaces a later
//     pending request for k. The workqueue's AddAfter(k, 0) adds k at once
//     and keeps the later request, so k is handed out twice (bench/libcost
//     TestDelayEarliestWins shows both).
//   - An idle agent sleeps: Run waits on one timer set to the next
//     deadline; the workqueue's loop also ticks every 10 s, and its
//     AddAfter blocks once 1,000 requests wait for that loop.
//
// bench/libcost BenchmarkDelayFire and BenchmarkDelayPending measure both
// queues at 10,000 keys.
package delay

import (
	"container/heap"
	"context"
	"sync"
	"time"
)

// Queue holds the pending requests. Run fires them.
type Queue[K comparable] struct {
	fire func(K)

	mu    sync.Mutex
	items itemHeap[K]
	index map[K]*item[K]
	wake  chan struct{}
}

type item[K comparable] struct {
	key K
	at  time.Time
	pos int
}

// New returns a queue that calls fire(key) when a request falls due.
func New[K comparable](fire func(K)) *Queue[K] {
	return &Queue[K]{fire: fire, index: make(map[K]*item[K]), wake: make(chan struct{}, 1)}
}

// After asks for fire(key) after d, unless an earlier request is pending.
func (q *Queue[K]) After(key K, d time.Duration) {
	at := time.Now().Add(d)
	q.mu.Lock()
	it, ok := q.index[key]
	switch {
	case !ok:
		it = &item[K]{key: key, at: at}
		heap.Push(&q.items, it)
		q.index[key] = it
	case at.Before(it.at):
		it.at = at
		heap.Fix(&q.items, it.pos)
	default:
		q.mu.Unlock()
		return
	}
	first := q.items[0] == it
	q.mu.Unlock()
	if first {
		select {
		case q.wake <- struct{}{}:
		default:
		}
	}
}

// Cancel drops a pending request.
func (q *Queue[K]) Cancel(key K) {
	q.mu.Lock()
	if it, ok := q.index[key]; ok {
		heap.Remove(&q.items, it.pos)
		delete(q.index, key)
	}
	q.mu.Unlock()
}

// Pending returns the number of keys waiting.
func (q *Queue[K]) Pending() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.items)
}

// Run fires due requests until ctx ends. fire may block; requests that
// fall due meanwhile fire when it returns.
func (q *Queue[K]) Run(ctx context.Context) {
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		q.mu.Lock()
		var due []K
		now := time.Now()
		for len(q.items) > 0 && !q.items[0].at.After(now) {
			it := heap.Pop(&q.items).(*item[K])
			delete(q.index, it.key)
			due = append(due, it.key)
		}
		wait := time.Hour
		if len(q.items) > 0 {
			wait = q.items[0].at.Sub(now)
		}
		q.mu.Unlock()
		for _, k := range due {
			q.fire(k)
		}
		if len(due) > 0 {
			continue
		}
		timer.Reset(wait)
		select {
		case <-ctx.Done():
			return
		case <-q.wake:
		case <-timer.C:
		}
	}
}

type itemHeap[K comparable] []*item[K]

func (h itemHeap[K]) Len() int           { return len(h) }
func (h itemHeap[K]) Less(i, j int) bool { return h[i].at.Before(h[j].at) }
func (h itemHeap[K]) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].pos, h[j].pos = i, j
}
func (h *itemHeap[K]) Push(x any) {
	it := x.(*item[K])
	it.pos = len(*h)
	*h = append(*h, it)
}
func (h *itemHeap[K]) Pop() any {
	old := *h
	it := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	return it
}
