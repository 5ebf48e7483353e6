package prober

import "time"

// probeHeap orders the armed probes by when they are due. It is a 4-ary
// heap of entries that carry the due time inline: at 10,000 pods it holds
// 20,000 probes, and a heap of pointers compared through p.due touched a
// probe scattered somewhere in memory at every step (container/heap's
// Less was 2.3 % of the agent's samples under 2,000 probes/s). Four
// children per node halve the depth, and they are 64 contiguous bytes.
// Each probe knows its index, so a probe disarmed or re-armed is removed
// or fixed in O(log n) without a search.
type probeHeap struct {
	// epoch is what keys count from: a time taken from the manager's
	// clock, so that Sub compares monotonic readings when there are some.
	epoch time.Time
	es    []heapEntry
}

// heapEntry is one armed probe and its due time, in nanoseconds since
// the heap's epoch.
type heapEntry struct {
	at int64
	p  *probe
}

func (h *probeHeap) key(t time.Time) int64 { return int64(t.Sub(h.epoch)) }

func (h *probeHeap) Len() int { return len(h.es) }

// first is the probe due soonest; the heap must not be empty.
func (h *probeHeap) first() *probe { return h.es[0].p }

// push adds p at p.due.
func (h *probeHeap) push(p *probe) {
	h.es = append(h.es, heapEntry{at: h.key(p.due), p: p})
	h.up(len(h.es) - 1)
}

// pop takes the probe due soonest off the heap.
func (h *probeHeap) pop() *probe {
	p := h.es[0].p
	h.remove(0)
	return p
}

// remove takes the probe at index i off the heap.
func (h *probeHeap) remove(i int) {
	p := h.es[i].p
	last := len(h.es) - 1
	moved := h.es[last]
	h.es[last] = heapEntry{}
	h.es = h.es[:last]
	p.index = -1
	if i != last {
		h.set(i, moved)
		h.fixAt(i)
	}
}

// fix restores the order after the due time of the probe at i changed.
func (h *probeHeap) fix(i int) {
	h.es[i].at = h.key(h.es[i].p.due)
	h.fixAt(i)
}

func (h *probeHeap) fixAt(i int) {
	if !h.down(i) {
		h.up(i)
	}
}

// up moves the entry at i towards the root while it is due sooner than
// its parent.
func (h *probeHeap) up(i int) {
	e := h.es[i]
	for i > 0 {
		parent := (i - 1) / 4
		if h.es[parent].at <= e.at {
			break
		}
		h.set(i, h.es[parent])
		i = parent
	}
	h.set(i, e)
}

// down moves the entry at i towards the leaves while a child is due
// sooner; it says whether the entry moved.
func (h *probeHeap) down(i int) bool {
	start := i
	e := h.es[i]
	n := len(h.es)
	for {
		c := 4*i + 1
		if c >= n {
			break
		}
		least := c
		for j := c + 1; j < c+4 && j < n; j++ {
			if h.es[j].at < h.es[least].at {
				least = j
			}
		}
		if h.es[least].at >= e.at {
			break
		}
		h.set(i, h.es[least])
		i = least
	}
	h.set(i, e)
	return i != start
}

// set puts e at i and tells its probe.
func (h *probeHeap) set(i int, e heapEntry) {
	h.es[i] = e
	e.p.index = i
}
