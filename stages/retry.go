package stages

import (
	"container/heap"
	"context"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// retryTimer fires a callback per pod at a chosen time, with one goroutine
// and one timer for all pods: thousands of pods in back-off must not cost
// thousands of goroutines or timers. A pod keeps only its earliest request.
type retryTimer struct {
	fire func(types.UID)

	mu    sync.Mutex
	items retryHeap
	index map[types.UID]*retryItem
	wake  chan struct{}
}

type retryItem struct {
	uid types.UID
	at  time.Time
	pos int
}

func newRetryTimer(fire func(types.UID)) *retryTimer {
	return &retryTimer{fire: fire, index: make(map[types.UID]*retryItem), wake: make(chan struct{}, 1)}
}

// After asks for fire(uid) after d, unless an earlier request is pending.
func (t *retryTimer) After(uid types.UID, d time.Duration) {
	at := time.Now().Add(d)
	t.mu.Lock()
	it, ok := t.index[uid]
	switch {
	case !ok:
		it = &retryItem{uid: uid, at: at}
		heap.Push(&t.items, it)
		t.index[uid] = it
	case at.Before(it.at):
		it.at = at
		heap.Fix(&t.items, it.pos)
	default:
		t.mu.Unlock()
		return
	}
	first := t.items[0] == it
	t.mu.Unlock()
	if first {
		select {
		case t.wake <- struct{}{}:
		default:
		}
	}
}

// Cancel drops a pending request.
func (t *retryTimer) Cancel(uid types.UID) {
	t.mu.Lock()
	if it, ok := t.index[uid]; ok {
		heap.Remove(&t.items, it.pos)
		delete(t.index, uid)
	}
	t.mu.Unlock()
}

// Pending returns the number of pods waiting for a retry.
func (t *retryTimer) Pending() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.items)
}

// Run fires due requests until ctx ends. fire may block (the pipeline
// window); requests that fall due meanwhile fire when it returns.
func (t *retryTimer) Run(ctx context.Context) {
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		t.mu.Lock()
		var due []types.UID
		now := time.Now()
		for len(t.items) > 0 && !t.items[0].at.After(now) {
			it := heap.Pop(&t.items).(*retryItem)
			delete(t.index, it.uid)
			due = append(due, it.uid)
		}
		wait := time.Hour
		if len(t.items) > 0 {
			wait = t.items[0].at.Sub(now)
		}
		t.mu.Unlock()
		for _, uid := range due {
			t.fire(uid)
		}
		if len(due) > 0 {
			continue
		}
		timer.Reset(wait)
		select {
		case <-ctx.Done():
			return
		case <-t.wake:
		case <-timer.C:
		}
	}
}

type retryHeap []*retryItem

func (h retryHeap) Len() int           { return len(h) }
func (h retryHeap) Less(i, j int) bool { return h[i].at.Before(h[j].at) }
func (h retryHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].pos, h[j].pos = i, j
}
func (h *retryHeap) Push(x any) {
	it := x.(*retryItem)
	it.pos = len(*h)
	*h = append(*h, it)
}
func (h *retryHeap) Pop() any {
	old := *h
	it := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	return it
}
