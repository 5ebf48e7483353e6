package pleg

import (
	"testing"
	"time"
)

func TestNormalizeTimestamp(t *testing.T) {
	f := func(v int64, want time.Time) {
		t.Helper()
		got := normalizeTimestamp(v)
		if !got.Equal(want) || got.IsZero() != want.IsZero() {
			t.Errorf("normalizeTimestamp(%d) = %v, want %v", v, got, want)
		}
	}
	// Unset.
	f(0, time.Time{})
	f(-1, time.Time{})
	f(-1_795_000_000_000_000_000, time.Time{})

	// One instant, 2026-11-18 11:06:40.123456789 UTC, in every unit.
	f(1_795_000_000, time.Unix(1_795_000_000, 0))
	f(1_795_000_000_123, time.Unix(1_795_000_000, 123_000_000))
	f(1_795_000_000_123_456, time.Unix(1_795_000_000, 123_456_000))
	f(1_795_000_000_123_456_789, time.Unix(1_795_000_000, 123_456_789))

	// Small values are seconds: the unit with the widest range of dates.
	f(1, time.Unix(1, 0))
	// The bands' edges: the top of each band is a date around the year 5138,
	// the bottom of the next one a date in 1973.
	f(secondsBelow-1, time.Unix(secondsBelow-1, 0))
	f(secondsBelow, time.UnixMilli(secondsBelow))
	f(millisBelow-1, time.UnixMilli(millisBelow-1))
	f(millisBelow, time.UnixMicro(millisBelow))
	f(microsBelow-1, time.UnixMicro(microsBelow-1))
	f(microsBelow, time.Unix(0, microsBelow))
	// The largest int64 is nanoseconds in 2262.
	f(1<<63-1, time.Unix(0, 1<<63-1))

	// Every band starts in 1973 and ends after the year 5000, so no date a
	// runtime can send lands in the wrong band.
	for _, edge := range []time.Time{
		time.UnixMilli(secondsBelow), time.UnixMicro(millisBelow), time.Unix(0, microsBelow),
	} {
		if edge.Year() != 1973 {
			t.Errorf("a band starts at %v, want 1973", edge)
		}
	}
	for _, top := range []time.Time{
		time.Unix(secondsBelow-1, 0), time.UnixMilli(millisBelow - 1), time.UnixMicro(microsBelow - 1),
	} {
		if top.Year() < 5000 {
			t.Errorf("a band ends at %v, want after the year 5000", top)
		}
	}
}
