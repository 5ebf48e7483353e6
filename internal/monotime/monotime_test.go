package monotime

import (
	"testing"
	"time"
)

func TestHas(t *testing.T) {
	now := time.Now()
	if !Has(now) {
		t.Fatal("time.Now has no monotonic reading")
	}
	if Has(now.Round(0)) || Has(time.Unix(0, now.UnixNano())) || Has(time.Time{}) {
		t.Fatal("a wall-clock time reported a monotonic reading")
	}
}

func TestAnchorKeepsTheWallTimeAndAddsAReading(t *testing.T) {
	now := time.Now()
	f := func(offset time.Duration) {
		t.Helper()
		wall := now.Round(0).Add(offset)
		a := Anchor(wall, now)
		if !Has(a) {
			t.Fatalf("offset %v: anchored time has no monotonic reading", offset)
		}
		if !a.Equal(wall) || a.UnixNano() != wall.UnixNano() {
			t.Fatalf("offset %v: wall time moved: %v, want %v", offset, a, wall)
		}
		// Both have readings now: Sub reads the monotonic clock, and
		// gives what the wall clock gave at anchoring.
		if d := a.Sub(now); d != offset {
			t.Fatalf("offset %v: monotonic distance from now %v", offset, d)
		}
	}
	f(0)
	f(-time.Hour)
	f(time.Hour)
	f(-1500 * time.Millisecond)
}

func TestAnchorLeavesAlone(t *testing.T) {
	now := time.Now()
	if a := Anchor(time.Time{}, now); !a.IsZero() {
		t.Fatalf("zero became %v", a)
	}
	mono := now.Add(-time.Second)
	if a := Anchor(mono, now); a != mono {
		t.Fatalf("a time with a reading changed: %v", a)
	}
	wallNow := now.Round(0)
	wall := wallNow.Add(-time.Minute)
	if a := Anchor(wall, wallNow); a != wall || Has(a) {
		t.Fatalf("anchored to a now without a reading: %v", a)
	}
}

// A clock set back after something happened shows it in the future; it
// happened at now at the latest.
func TestAnchorNotAfter(t *testing.T) {
	now := time.Now()
	if a := AnchorNotAfter(now.Round(0).Add(time.Hour), now); a != now {
		t.Fatalf("future time anchored to %v, want now", a)
	}
	past := now.Round(0).Add(-time.Hour)
	if a := AnchorNotAfter(past, now); !Has(a) || a.Sub(now) != -time.Hour {
		t.Fatalf("past time anchored to %v", a)
	}
}
