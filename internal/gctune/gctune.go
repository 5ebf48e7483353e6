// Package gctune holds the Go heap near the live state of an agent that is
// idle most of the time, without the collections the runtime makes when
// nothing asks for them.
//
// While the agent works, the runtime paces collections as GOGC asks
// (headroom of a percentage of the live heap). Under GOGC the runtime
// also collects at least every two minutes when nothing is allocated,
// and each of those collections marks the whole heap: at 10,000 pods that
// was most of an idle agent's CPU, growing with the pods. So once no
// collection has come for a while (the agent is idle), GOGC goes off and a
// memory limit of the memory in use plus the same headroom takes its
// place: an idle agent is then not collected until it has allocated the
// headroom. The first collection under the limit means work again, and
// GOGC comes back. The limit serves only the idle spells: under a limit
// the runtime returns free pages to the system as the heap nears it, and
// a busy heap that fills and frees them at every cycle paid for that in
// page faults (a third more CPU to start 10,000 pods).
package gctune

import (
	"math"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"time"
)

// Tuner switches between the two modes until Stop.
type Tuner struct {
	percent int
	floor   uint64
	idle    time.Duration

	mu      sync.Mutex
	limited bool   // GOGC off, the limit in force
	gcs     uint64 // collections counted at the last look
	stop    chan struct{}
	done    chan struct{}
}

// Start sets GOGC to percent and looks every idle for a spell without
// collections. floor is the least headroom under the limit.
func Start(percent int, floor uint64, idle time.Duration) *Tuner {
	t := &Tuner{percent: percent, floor: floor, idle: idle, stop: make(chan struct{}), done: make(chan struct{})}
	debug.SetGCPercent(percent)
	t.gcs = read().gcs
	go t.run()
	return t
}

// Stop gives the runtime back its default: GOGC 100 and no limit.
func (t *Tuner) Stop() {
	close(t.stop)
	<-t.done
	debug.SetMemoryLimit(math.MaxInt64)
	debug.SetGCPercent(100)
}

// Limited reports whether the idle mode is on.
func (t *Tuner) Limited() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.limited
}

func (t *Tuner) run() {
	defer close(t.done)
	tick := time.NewTicker(t.idle)
	defer tick.Stop()
	for {
		select {
		case <-t.stop:
			return
		case <-tick.C:
			t.look(read())
		}
	}
}

// look decides from what the runtime says now.
func (t *Tuner) look(s sample) {
	t.mu.Lock()
	defer t.mu.Unlock()
	collected := s.gcs != t.gcs
	t.gcs = s.gcs
	switch {
	case t.limited && collected:
		// The heap reached the limit: work again.
		t.limited = false
		debug.SetGCPercent(t.percent)
		debug.SetMemoryLimit(math.MaxInt64)
	case !t.limited && !collected:
		// A whole period without a collection: idle.
		t.limited = true
		debug.SetMemoryLimit(Limit(s.live, s.inUse, uint64(t.percent), t.floor))
		debug.SetGCPercent(-1)
	}
}

// Limit is the idle mode's memory limit: the memory in use and percent
// of the live heap as headroom, at least floor.
func Limit(live, inUse, percent, floor uint64) int64 {
	return int64(inUse + max(live*percent/100, floor))
}

type sample struct{ gcs, live, inUse uint64 }

var sampleNames = []string{
	"/gc/cycles/total:gc-cycles",
	"/gc/heap/live:bytes",
	"/memory/classes/total:bytes",
	"/memory/classes/heap/released:bytes",
}

func read() sample {
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
	total, released := v(2), v(3)
	return sample{gcs: v(0), live: v(1), inUse: total - min(released, total)}
}
