package stages

import (
	"testing"
	"time"

	"github.com/podline/podline/internal/monotime"
)

func TestBackoffDoubling(t *testing.T) {
	b := NewBackoff(crashBackoffBase, crashBackoffMax)
	if d := b.Delay("app"); d != 0 {
		t.Fatalf("unknown key: delay %s, want 0", d)
	}
	at := baseTime
	for i, want := range []time.Duration{10 * time.Second, 20 * time.Second, 40 * time.Second, 80 * time.Second,
		160 * time.Second, 5 * time.Minute, 5 * time.Minute} {
		b.Next("app", at)
		if d := b.Delay("app"); d != want {
			t.Errorf("after failure %d: delay %s, want %s", i+1, d, want)
		}
		at = at.Add(want + time.Second)
	}
	if d := b.Delay("other"); d != 0 {
		t.Errorf("keys are independent: other has delay %s", d)
	}
}

func TestBackoffResetAfterQuietPeriod(t *testing.T) {
	f := func(name string, quiet time.Duration, want time.Duration) {
		t.Helper()
		b := NewBackoff(crashBackoffBase, crashBackoffMax)
		b.Next("app", baseTime)
		b.Next("app", baseTime.Add(time.Second)) // 20s now
		b.Next("app", baseTime.Add(time.Second+quiet))
		if d := b.Delay("app"); d != want {
			t.Errorf("%s: delay %s, want %s", name, d, want)
		}
	}
	f("next failure soon: doubles", time.Minute, 40*time.Second)
	f("exactly twice the maximum: still doubles", 10*time.Minute, 40*time.Second)
	f("longer than twice the maximum: starts over", 10*time.Minute+time.Nanosecond, 10*time.Second)
}

func TestBackoffRemaining(t *testing.T) {
	b := NewBackoff(crashBackoffBase, crashBackoffMax)
	f := func(name string, since, now time.Time, want time.Duration) {
		t.Helper()
		if got := b.Remaining("app", since, now); got != want {
			t.Errorf("%s: remaining %s, want %s", name, got, want)
		}
	}
	f("unknown key: go ahead", baseTime, baseTime, 0)
	b.Next("app", baseTime) // restarted at baseTime: 10s armed
	exit := baseTime.Add(3 * time.Second)
	f("right after the exit", exit, exit, 10*time.Second)
	f("part way", exit, exit.Add(4*time.Second), 6*time.Second)
	f("at expiry", exit, exit.Add(10*time.Second), 0)
	f("after expiry", exit, exit.Add(time.Hour), 0)
	late := baseTime.Add(10*time.Minute + time.Second)
	f("the failure came after a long good run: go ahead", late, late, 0)
	b.Reset("app")
	f("after Reset", exit, exit, 0)
}

func TestBackoffWait(t *testing.T) {
	b := NewBackoff(imageBackoffBase, imageBackoffMax)
	if w := b.Wait("img", baseTime); w != 0 {
		t.Errorf("unknown key: wait %s", w)
	}
	b.Next("img", baseTime)
	b.Next("img", baseTime.Add(time.Minute)) // 20s from there
	f := func(now time.Time, want time.Duration) {
		t.Helper()
		if got := b.Wait("img", now); got != want {
			t.Errorf("wait at %s: %s, want %s", now.Sub(baseTime), got, want)
		}
	}
	f(baseTime.Add(time.Minute), 20*time.Second)
	f(baseTime.Add(time.Minute+15*time.Second), 5*time.Second)
	f(baseTime.Add(time.Minute+20*time.Second), 0)
	f(baseTime.Add(time.Hour), 0)
}

func TestStepBackoff(t *testing.T) {
	f := func(n int, want time.Duration) {
		t.Helper()
		if got := stepBackoff(n); got != want {
			t.Errorf("stepBackoff(%d) = %s, want %s", n, got, want)
		}
	}
	f(0, 500*time.Millisecond)
	f(1, 500*time.Millisecond)
	f(2, time.Second)
	f(3, 2*time.Second)
	f(7, 32*time.Second)
	f(8, time.Minute)
	f(9, time.Minute)
	f(1000000, time.Minute)
}

// The runtime stamps an exit with the wall clock. A clock set back or
// forward an hour between the exit and podline's look at it must not hold
// the restart for an hour, nor skip the back-off: the exit is placed
// between the restart Next recorded and now, on the monotonic clock.
func TestBackoffRemainingClockSet(t *testing.T) {
	f := func(name string, offset, want time.Duration) {
		t.Helper()
		b := NewBackoff(crashBackoffBase, crashBackoffMax)
		restarted := time.Now()
		b.Next("app", restarted) // 10s armed
		now := restarted.Add(3 * time.Second)
		exit := now.Round(0).Add(offset) // the stamp, read after the clock was set
		if got := b.Remaining("app", exit, now); got != want {
			t.Errorf("%s: remaining %s, want %s", name, got, want)
		}
		// Later passes count from the same monotonic moment, whatever
		// the wall clock says by then.
		at := b.entries["app"].exitAt
		if !monotime.Has(at) {
			t.Fatalf("%s: the exit was kept without a monotonic reading: %v", name, at)
		}
		if got := b.Remaining("app", exit, now.Add(2*time.Second)); got != max(want-2*time.Second, 0) {
			t.Errorf("%s: 2s later: remaining %s, want %s", name, got, max(want-2*time.Second, 0))
		}
	}
	// Set back after the exit: the stamp is in the future (read on the
	// wall clock, it is an hour after the restart and the back-off looked
	// forgotten). It happened by now at the latest: the wait is the delay.
	f("clock set back an hour", time.Hour, 10*time.Second)
	// Set forward: the stamp looks an hour old. It happened after the
	// restart, so the wait is at least what is left from there.
	f("clock set forward an hour", -time.Hour, 7*time.Second)
	f("clock not set", -time.Second, 9*time.Second)
}
