package pleg

import "time"

// Bounds between the units a runtime may use for "time since the epoch".
// Runtimes have sent nanoseconds where the CRI asks for seconds and the
// reverse (containerd issue #10740), so a timestamp's unit is decided by its
// magnitude. Every unit's band below covers the dates from 1973 to the year
// 5138, so any date a runtime can plausibly send falls in exactly one band:
// 1e11 s is the year 5138 while 1e11 ms is March 1973, and so on up.
const (
	secondsBelow = 100_000_000_000         // 1e11
	millisBelow  = 100_000_000_000_000     // 1e14
	microsBelow  = 100_000_000_000_000_000 // 1e17; nanoseconds above, up to int64's year 2262
)

// normalizeTimestamp turns a runtime timestamp in seconds, milliseconds,
// microseconds or nanoseconds since the epoch into a time. Zero and
// negative values mean "unset" and give the zero time.
func normalizeTimestamp(v int64) time.Time {
	switch {
	case v <= 0:
		return time.Time{}
	case v < secondsBelow:
		return time.Unix(v, 0)
	case v < millisBelow:
		return time.UnixMilli(v)
	case v < microsBelow:
		return time.UnixMicro(v)
	}
	return time.Unix(0, v)
}
