package main

import (
	"math"
	"os"
	"runtime/debug"
	"testing"
)

func TestGCPolicy(t *testing.T) {
	t.Setenv("GOGC", "") // restored at the end
	t.Setenv("GOMEMLIMIT", "")
	os.Unsetenv("GOGC")
	os.Unsetenv("GOMEMLIMIT")
	stop := applyGCPolicy()
	if p := debug.SetGCPercent(-1); p != gcHeadroom {
		t.Errorf("neither set: GC percent %d, want %d", p, gcHeadroom)
	}
	debug.SetGCPercent(gcHeadroom)
	stop()
	if p, limit := debug.SetGCPercent(100), debug.SetMemoryLimit(-1); p != 100 || limit != math.MaxInt64 {
		t.Errorf("after stop: GC percent %d and limit %d, want the defaults", p, limit)
	}

	t.Setenv("GOMEMLIMIT", "1GiB")
	stop = applyGCPolicy()
	if p := debug.SetGCPercent(-1); p != gcHeadroom {
		t.Errorf("GOMEMLIMIT alone: GC percent %d, want %d", p, gcHeadroom)
	}
	debug.SetGCPercent(gcHeadroom)
	stop()

	t.Setenv("GOGC", "200")
	debug.SetGCPercent(200) // what the runtime read from it at start
	applyGCPolicy()()
	if p := debug.SetGCPercent(100); p != 200 {
		t.Errorf("GOGC=200: GC percent %d, want the environment's 200", p)
	}
}
