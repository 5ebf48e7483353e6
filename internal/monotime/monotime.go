// Package monotime turns a wall-clock time from outside the process (a
// runtime's timestamp, an API object's, a token's claims) into one that
// carries a monotonic clock reading, so that the timers and deadlines
// counted from it do not move when the system clock is set.
//
// Go compares two times by their monotonic readings when both have one,
// and by the wall clock otherwise. A time parsed from an API object, made
// with time.Unix, or stripped with Round(0) has none: every comparison
// with it reads the wall clock, and a clock set back an hour then holds a
// back-off or a probe for an hour. Anchoring reads the wall clock once,
// when the value comes in, and counts from the monotonic clock after.
//
// It owns no state and reads no clock: callers pass now.
package monotime

import "time"

// Has reports whether t carries a monotonic clock reading. Round(0)
// strips only that reading, so the two differ exactly when there is one.
func Has(t time.Time) bool { return t != t.Round(0) }

// Anchor returns t with a monotonic reading: the same wall-clock time,
// and on the monotonic clock as far from now as t is from now on the wall
// clock at this moment. A t that has a reading already, a zero t and a now
// without one are returned as they are.
func Anchor(t, now time.Time) time.Time {
	if t.IsZero() || Has(t) || !Has(now) {
		return t
	}
	return now.Add(t.Sub(now.Round(0)))
}

// AnchorNotAfter is Anchor, and no later than now: for the time of
// something that has happened already (a container's start, its exit),
// which a clock set back after it would otherwise put in the future.
func AnchorNotAfter(t, now time.Time) time.Time {
	a := Anchor(t, now)
	if a.After(now) {
		return now
	}
	return a
}
