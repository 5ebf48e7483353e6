package podstatus

import (
	"log/slog"
	"sync"
	"time"
)

// quietLog turns the failures of many pods into one warning per interval:
// when the API server is gone every pod's update fails at once, and a line
// per pod per retry would bury the log. Each failure still goes to Debug.
type quietLog struct {
	interval time.Duration

	mu         sync.Mutex
	last       time.Time
	suppressed int
	warned     bool // a warning was logged and no success has followed
}

func (q *quietLog) failed(log *slog.Logger, msg string, args ...any) {
	now := time.Now()
	q.mu.Lock()
	if !q.last.IsZero() && now.Sub(q.last) < q.interval {
		q.suppressed++
		q.mu.Unlock()
		log.Debug(msg, args...)
		return
	}
	n := q.suppressed
	q.last, q.suppressed, q.warned = now, 0, true
	q.mu.Unlock()
	log.Warn(msg, append(args, "failures_not_logged", n)...)
}

// succeeded says once that requests work again after a warning, and
// reports whether it did. It keeps the time of that warning: a pod that
// keeps failing among pods that succeed still gets at most one warning per
// interval.
func (q *quietLog) succeeded(log *slog.Logger) bool {
	q.mu.Lock()
	if !q.warned {
		q.mu.Unlock()
		return false
	}
	n := q.suppressed
	q.warned, q.suppressed = false, 0
	q.mu.Unlock()
	log.Info("pod status updates succeed again", "failures_not_logged", n)
	return true
}

// failing reports whether requests failed since the last success.
func (q *quietLog) failing() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.warned
}
