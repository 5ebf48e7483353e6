package prober

// probeHeap orders the armed probes by when they are due; container/heap
// drives it. Each probe knows its index, so a probe disarmed or re-armed is
// removed or fixed in O(log n) without a search.
type probeHeap []*probe

func (h probeHeap) Len() int           { return len(h) }
func (h probeHeap) Less(i, j int) bool { return h[i].due.Before(h[j].due) }

func (h probeHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index = i
	h[j].index = j
}

func (h *probeHeap) Push(x any) {
	p := x.(*probe)
	p.index = len(*h)
	*h = append(*h, p)
}

func (h *probeHeap) Pop() any {
	old := *h
	n := len(old) - 1
	p := old[n]
	old[n] = nil
	p.index = -1
	*h = old[:n]
	return p
}
