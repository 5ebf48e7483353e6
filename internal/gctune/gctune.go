// Package gctune holds the Go heap near the live state of an agent that is
// idle most of the time. It keeps the collector's target at a percentage
// of the live heap above it, as GOGC does, but through the runtime's
// memory limit with GOGC off: a process under GOGC is collected at least
// every two minutes even when it allocates nothing, and each of those
// collections marks the whole heap. At 10,000 pods that was most of an
// idle agent's CPU, 0.3 % of a core on average, growing with the pods.
// Under a limit, an idle agent is not collected until it has allocated
// the headroom.
//
// After each collection (a finalizer that re-arms itself runs then) the
// limit becomes what the runtime holds beside the heap, plus the live
// heap, plus the headroom. A heap that grows faster than the limit follows
// is collected at the limit, as GOGC would collect it at its target.
package gctune

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync/atomic"
)

// Tuner moves the memory limit after every collection until Stop.
type Tuner struct {
	percent uint64
	floor   uint64
	stopped atomic.Bool
	limit   atomic.Int64
}

// Start turns GOGC off and sets the first limit: headroom of percent of
// the live heap, and at least floor bytes.
func Start(percent int, floor uint64) *Tuner {
	t := &Tuner{percent: uint64(max(percent, 1)), floor: floor}
	debug.SetGCPercent(-1)
	t.adjust()
	t.arm()
	return t
}

// Stop gives the runtime back its default: GOGC 100 and no limit.
func (t *Tuner) Stop() {
	t.stopped.Store(true)
	debug.SetMemoryLimit(int64(^uint64(0) >> 1))
	debug.SetGCPercent(100)
}

// Limit is the memory limit last set.
func (t *Tuner) Limit() int64 { return t.limit.Load() }

// sentinel is big enough not to share a tiny allocation block, whose
// finalizers run only when every object in the block is unreachable.
type sentinel struct{ _ [32]byte }

func (t *Tuner) arm() {
	runtime.SetFinalizer(new(sentinel), func(*sentinel) {
		if t.stopped.Load() {
			return
		}
		t.adjust()
		t.arm()
	})
}

var sampleNames = []string{
	"/gc/heap/live:bytes",
	"/memory/classes/total:bytes",
	"/memory/classes/heap/released:bytes",
	"/memory/classes/heap/objects:bytes",
	"/memory/classes/heap/unused:bytes",
	"/memory/classes/heap/free:bytes",
}

func (t *Tuner) adjust() {
	s := make([]metrics.Sample, len(sampleNames))
	for i, n := range sampleNames {
		s[i].Name = n
	}
	metrics.Read(s)
	v := func(i int) uint64 {
		if s[i].Value.Kind() != metrics.KindUint64 {
			return 0
		}
		return s[i].Value.Uint64()
	}
	live, total, released := v(0), v(1), v(2)
	heap := v(3) + v(4) + v(5)
	limit := Limit(live, total-released-min(heap, total-released), t.percent, t.floor)
	t.limit.Store(limit)
	debug.SetMemoryLimit(limit)
}

// Limit is the memory limit for a live heap of live bytes when the
// runtime holds other bytes beside the heap (stacks, its own metadata):
// those, the live heap, and percent of it as headroom, at least floor.
func Limit(live, other, percent, floor uint64) int64 {
	return int64(other + live + max(live*percent/100, floor))
}
