package logs

import (
	"bufio"
	"fmt"
	"math"
	"net/http"
	"time"
)

// output turns entries into what the client reads: the since filter, the
// timestamp prefix and the byte limit are applied per entry, in that order,
// as the kubelet applies them, so the same request gives the same bytes.
type output struct {
	w       *bufio.Writer
	flusher http.Flusher
	since   time.Time
	stamps  bool
	remain  int64
	// newLine is whether the next entry starts a line of output: only
	// then does it get a timestamp, so a line split into partial entries
	// reads as one line stamped with its first part's time.
	newLine bool
	// dirty is whether anything was written since the last flush; the
	// first flush is made anyway, to send the headers.
	dirty bool
	stamp [len(timeOut) + 8]byte
}

func newOutput(w *bufio.Writer, flusher http.Flusher, opts Options) *output {
	o := &output{w: w, flusher: flusher, stamps: opts.Timestamps, remain: math.MaxInt64, newLine: true, dirty: true}
	if opts.SinceTime != nil {
		o.since = *opts.SinceTime
	}
	if opts.LimitBytes != nil {
		o.remain = *opts.LimitBytes
	}
	return o
}

// write outputs e and reports whether the byte limit is used up.
func (o *output) write(e *entry) (full bool, err error) {
	// A skipped entry still decides whether the next one starts a line:
	// the kubelet tracks the file's lines, not the output's.
	defer func() { o.newLine = e.endsLine() }()
	if e.time.Before(o.since) {
		return false, nil
	}
	if o.stamps && o.newLine {
		b := append(e.time.AppendFormat(o.stamp[:0], timeOut), ' ')
		if full, err := o.put(b); full || err != nil {
			return full, err
		}
	}
	return o.put(e.content)
}

// put writes b, cut to what the limit leaves: the kubelet cuts mid-line,
// even mid-timestamp, rather than give more bytes than asked for.
func (o *output) put(b []byte) (full bool, err error) {
	if int64(len(b)) > o.remain {
		b = b[:o.remain]
	}
	n, err := o.w.Write(b)
	o.remain -= int64(n)
	o.dirty = true
	if err != nil {
		return false, fmt.Errorf("write log: %w", err)
	}
	return o.remain <= 0, nil
}

// flush hands what is buffered to the client now: a follower's reader
// (kubectl logs -f) must see a line when it is written, not when a buffer
// fills, and the first flush sends the response headers before any wait.
func (o *output) flush() error {
	if !o.dirty {
		return nil
	}
	o.dirty = false
	if err := o.w.Flush(); err != nil {
		return fmt.Errorf("write log: %w", err)
	}
	if o.flusher != nil {
		o.flusher.Flush()
	}
	return nil
}
