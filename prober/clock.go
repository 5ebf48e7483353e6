package prober

import "time"

// Clock is the time the scheduler reads and waits on. Tests drive a fake
// one; handler timeouts are always real time (they bound real I/O).
type Clock interface {
	Now() time.Time
	NewTimer(d time.Duration) Timer
}

// Timer is the one timer the scheduler re-arms for the earliest due probe.
type Timer interface {
	C() <-chan time.Time
	// Reset re-arms the timer; a value not yet received is dropped (as
	// time.Timer does since Go 1.23).
	Reset(d time.Duration)
	Stop()
}

type realClock struct{}

func (realClock) Now() time.Time                 { return time.Now() }
func (realClock) NewTimer(d time.Duration) Timer { return realTimer{time.NewTimer(d)} }

type realTimer struct{ t *time.Timer }

func (r realTimer) C() <-chan time.Time   { return r.t.C }
func (r realTimer) Reset(d time.Duration) { r.t.Reset(d) }
func (r realTimer) Stop()                 { r.t.Stop() }
