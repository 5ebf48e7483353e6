package main

import (
	"os"
	"runtime/debug"
	"testing"
)

func TestGCPolicy(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))

	t.Setenv("GOGC", "") // restored at the end
	os.Unsetenv("GOGC")
	debug.SetGCPercent(100)
	applyGCPolicy()
	if got := debug.SetGCPercent(100); got != defaultGCPercent {
		t.Errorf("GOGC unset: GC percent %d, want %d", got, defaultGCPercent)
	}

	t.Setenv("GOGC", "200")
	debug.SetGCPercent(200) // what the runtime read from it at start
	applyGCPolicy()
	if got := debug.SetGCPercent(100); got != 200 {
		t.Errorf("GOGC=200: GC percent %d, want the environment's 200", got)
	}
}
