package stages

import (
	"time"

	"github.com/podline/podline/internal/monotime"
)

const (
	// A crashing container is restarted at once the first time, then after
	// 10s, 20s, ... up to 5 minutes. A container that ran for longer than
	// twice the maximum (10 minutes) starts over from 10s.
	crashBackoffBase = 10 * time.Second
	crashBackoffMax  = 5 * time.Minute
	imageBackoffBase = 10 * time.Second
	imageBackoffMax  = 5 * time.Minute
	// A failing step is retried sooner: most failures are a busy runtime.
	stepBackoffBase = 500 * time.Millisecond
	stepBackoffMax  = time.Minute
)

// Backoff is an exponential back-off per key (a container name, an image).
// It is plain data owned by one pod's pass, so it needs no lock.
type Backoff struct {
	base, max time.Duration
	entries   map[string]backoffEntry
}

type backoffEntry struct {
	delay      time.Duration
	lastUpdate time.Time
	// why is the failure backed off from, for the waiting message.
	why string
	// exitWall is the failure time Remaining was last given, as given;
	// exitAt is the same moment on the monotonic clock, fixed when it was
	// first seen (see since).
	exitWall, exitAt time.Time
}

// NewBackoff returns an empty back-off that starts at base and doubles up
// to max.
func NewBackoff(base, max time.Duration) Backoff {
	return Backoff{base: base, max: max}
}

// expired reports whether an entry last updated at last no longer applies
// to an event at t: the key behaved for twice the maximum delay.
func (b *Backoff) expired(e backoffEntry, t time.Time) bool {
	return t.Sub(e.lastUpdate) > 2*b.max
}

// Remaining returns how long after now key must still wait, given that the
// failure it backs off from happened at since. Zero means go ahead.
func (b *Backoff) Remaining(key string, since, now time.Time) time.Duration {
	e, ok := b.entries[key]
	if !ok {
		return 0
	}
	since = b.since(key, e, since, now)
	if b.expired(e, since) {
		return 0
	}
	if rem := since.Add(e.delay).Sub(now); rem > 0 {
		return rem
	}
	return 0
}

// since returns the failure time t on the monotonic clock. A container's
// exit time is the runtime's wall-clock stamp: compared with now on every
// pass, a clock set back an hour would hold the restart for an hour and
// one set forward would skip the back-off. It is read against the wall
// clock once, when first seen, and counted on the monotonic clock after.
// The exit came after the restart Next recorded, and before now: a clock
// set between the exit and this first look moves it at most within that.
func (b *Backoff) since(key string, e backoffEntry, t, now time.Time) time.Time {
	if monotime.Has(t) {
		return t
	}
	if !e.exitAt.IsZero() && e.exitWall.Equal(t) {
		return e.exitAt
	}
	at := monotime.AnchorNotAfter(t, now)
	if at.Before(e.lastUpdate) {
		at = e.lastUpdate
	}
	e.exitWall, e.exitAt = t, at
	b.entries[key] = e
	return at
}

// Delay returns the delay the next failure of key will wait.
func (b *Backoff) Delay(key string) time.Duration {
	return b.entries[key].delay
}

// Next records a retry of key at now and doubles its delay.
func (b *Backoff) Next(key string, now time.Time) { b.NextBecause(key, now, "") }

// NextBecause is Next that also keeps why the key failed, for Why.
func (b *Backoff) NextBecause(key string, now time.Time, why string) {
	if b.entries == nil {
		b.entries = make(map[string]backoffEntry)
	}
	e, ok := b.entries[key]
	if !ok || b.expired(e, now) {
		e.delay = b.base
	} else {
		e.delay = min(2*e.delay, b.max)
	}
	e.lastUpdate, e.why = now, why
	b.entries[key] = e
}

// Why returns what the last NextBecause of key gave.
func (b *Backoff) Why(key string) string { return b.entries[key].why }

// Reset forgets key.
func (b *Backoff) Reset(key string) { delete(b.entries, key) }

// stepBackoff is the retry delay after n consecutive failed passes.
func stepBackoff(n int) time.Duration {
	d := stepBackoffBase
	for i := 1; i < n && d < stepBackoffMax; i++ {
		d *= 2
	}
	return min(d, stepBackoffMax)
}

// Wait returns how long key must still wait after its last failure
// recorded with Next; zero means go ahead.
func (b *Backoff) Wait(key string, now time.Time) time.Duration {
	e, ok := b.entries[key]
	if !ok {
		return 0
	}
	return max(e.lastUpdate.Add(e.delay).Sub(now), 0)
}
