package ebpf

import (
	"context"
	"errors"
	"fmt"

	"github.com/cilium/ebpf/ringbuf"
)

// Run reads events and calls out with each, in this goroutine, until ctx
// ends (it returns ctx.Err()) or Close is called (it returns nil). It blocks
// in epoll while nothing happens. out must be quick: while it runs, the
// kernel queues into the ring buffer and drops once it is full.
func (t *Tracer) Run(ctx context.Context, out func(Event)) error {
	if !t.running.TryLock() {
		return errors.New("ebpf: Run is already running")
	}
	defer t.running.Unlock()
	if t.closed.Load() {
		return nil
	}

	// Flush is how a blocked read learns that ctx ended: it wakes the read
	// without the reader's lock, which a blocked read holds (SetDeadline
	// would wait for the next event).
	stop := context.AfterFunc(ctx, func() { t.rd.Flush() })
	defer stop()

	var rec ringbuf.Record
	for {
		err := t.rd.ReadInto(&rec)
		switch {
		case errors.Is(err, ringbuf.ErrClosed):
			return nil
		case errors.Is(err, ringbuf.ErrFlushed):
			if ctx.Err() != nil {
				return ctx.Err()
			}
			continue // left by an earlier Run's ctx; ours is live
		case err != nil:
			return fmt.Errorf("read ebpf ring buffer: %w", err)
		}

		ev, err := decode(rec.RawSample)
		if err != nil {
			return fmt.Errorf("BUG: %w", err)
		}
		countEvent(ev.Kind)
		out(ev)
		// Drops happen only while the buffer is full, so looking once it
		// has been drained is enough and costs one lookup per burst.
		if rec.Remaining == 0 {
			t.syncDropped()
		}
	}
}

// syncDropped moves the kernel's drop count into the metric.
func (t *Tracer) syncDropped() {
	n := t.Dropped()
	if old := t.reported.Swap(n); n > old {
		droppedEvents.Add(int(n - old))
		t.log.Warn("ebpf ring buffer was full, events lost", "lost", n-old, "lost_total", n)
		select {
		case t.lost <- struct{}{}:
		default: // a signal is pending; it covers these drops too
		}
	}
}
