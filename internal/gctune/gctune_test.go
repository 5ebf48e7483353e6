package gctune

import (
	"math"
	"runtime/debug"
	"testing"
)

func TestLimit(t *testing.T) {
	for _, c := range []struct {
		live, inUse, percent, floor uint64
		want                        int64
	}{
		{live: 100 << 20, inUse: 150 << 20, percent: 50, floor: 16 << 20, want: 200 << 20},
		// A small heap gets the floor as headroom.
		{live: 4 << 20, inUse: 20 << 20, percent: 50, floor: 16 << 20, want: 36 << 20},
	} {
		if got := Limit(c.live, c.inUse, c.percent, c.floor); got != c.want {
			t.Errorf("Limit(%d, %d, %d, %d) = %d, want %d", c.live, c.inUse, c.percent, c.floor, got, c.want)
		}
	}
}

// A look without a collection since the last one turns the limit on and
// GOGC off; a look after a collection turns them back.
func TestModes(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	defer debug.SetMemoryLimit(math.MaxInt64)
	tu := &Tuner{percent: 50, floor: 16 << 20, gcs: 7}
	debug.SetGCPercent(50)

	tu.look(sample{gcs: 8, live: 100 << 20, inUse: 150 << 20})
	if tu.Limited() || debug.SetGCPercent(50) != 50 {
		t.Fatal("limited although a collection came since the last look")
	}
	tu.look(sample{gcs: 8, live: 100 << 20, inUse: 150 << 20})
	if !tu.Limited() {
		t.Fatal("not limited after a look without a collection")
	}
	if p := debug.SetGCPercent(-1); p != -1 {
		t.Fatalf("idle: GC percent %d, want off", p)
	}
	if l := debug.SetMemoryLimit(-1); l != 200<<20 {
		t.Fatalf("idle: limit %d, want %d", l, 200<<20)
	}
	tu.look(sample{gcs: 8, live: 100 << 20, inUse: 150 << 20})
	if !tu.Limited() {
		t.Fatal("left the idle mode without a collection")
	}
	tu.look(sample{gcs: 9, live: 110 << 20, inUse: 200 << 20})
	if tu.Limited() {
		t.Fatal("still limited after a collection")
	}
	if p, l := debug.SetGCPercent(50), debug.SetMemoryLimit(-1); p != 50 || l != math.MaxInt64 {
		t.Fatalf("working: GC percent %d and limit %d, want 50 and none", p, l)
	}
}

func TestStartStop(t *testing.T) {
	tu := Start(50, 16<<20, 3600e9)
	if p := debug.SetGCPercent(-1); p != 50 {
		t.Errorf("GC percent %d after Start, want 50", p)
	}
	debug.SetGCPercent(50)
	tu.Stop()
	if p, l := debug.SetGCPercent(100), debug.SetMemoryLimit(-1); p != 100 || l != math.MaxInt64 {
		t.Errorf("after Stop: GC percent %d and limit %d", p, l)
	}
}
