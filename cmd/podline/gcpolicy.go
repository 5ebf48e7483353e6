package main

import (
	"os"
	"runtime/debug"
	"time"

	"github.com/podline/podline/internal/gctune"
)

// gcHeadroom is the heap podline lets grow above its live state before a
// collection, in percent of it: Go's default GOGC is 100. An agent's heap
// is mostly the pods it holds, kept for as long as they run, and little
// garbage, and RSS follows the heap's peak: half the live heap as
// headroom keeps RSS near what the pods need (at 10,000 pods, about
// 60 MiB less), for collections twice as often that find little to mark
// besides the same pods.
const gcHeadroom = 50

// gcFloor is the least headroom in an idle spell, so that a small idle
// agent is not collected at every few kilobytes it allocates.
const gcFloor = 16 << 20

// gcIdle is how long without a collection makes an idle spell: well
// under the runtime's two minutes between forced collections.
const gcIdle = 30 * time.Second

// applyGCPolicy sets GOGC to gcHeadroom, and in idle spells a memory limit
// instead (internal/gctune), so that an idle agent is not collected every
// two minutes as GOGC alone would have it. GOGC in the environment is
// the runtime's own and wins; GOMEMLIMIT alone keeps its limit, with GOGC
// at gcHeadroom. It returns what undoes the policy.
func applyGCPolicy() (stop func()) {
	if _, set := os.LookupEnv("GOGC"); set {
		return func() {}
	}
	if _, set := os.LookupEnv("GOMEMLIMIT"); set {
		old := debug.SetGCPercent(gcHeadroom)
		return func() { debug.SetGCPercent(old) }
	}
	return gctune.Start(gcHeadroom, gcFloor, gcIdle).Stop
}
