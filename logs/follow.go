package logs

import (
	"context"
	"errors"
	"fmt"
	"os"
)

// follower is a follow request's state between waits.
type follower struct {
	*reading
	cur *lineReader
	// next is the file now at the path when it is no longer cur's: the
	// rotation renamed cur away and the runtime made a new one.
	next      *os.File
	nextInfo  os.FileInfo // next's identity
	switching bool        // cur is to be drained once more, then next read
	rotated   bool        // the path may name another file: look
	stopping  bool        // the container stopped: drain, then return
}

// follow writes r's file from its current offset on, woken by h when the
// log directory changes (writes, and the kubelet's rotation: rename away,
// new file at the path) and when its check finds the container stopped.
func (rd *reading) follow(ctx context.Context, h *Hub, r *lineReader, running func() bool) error {
	// Joining before the first read leaves no gap for a write to fall in.
	in, err := h.join(rd.path, running)
	if err != nil {
		return fmt.Errorf("follow log %s: %w", rd.path, err)
	}
	defer h.leave(in)
	fl := &follower{reading: rd, cur: r}
	defer func() {
		fl.cur.close()
		if fl.next != nil {
			fl.next.Close()
		}
	}()
	// Asked once before the first wait: following a container that has
	// already exited gives its log and returns at once.
	askNow := running != nil
	for {
		stop, err := rd.drain(fl.cur)
		if stop || err != nil {
			return errors.Join(err, rd.out.flush())
		}
		if fl.switching {
			if err := fl.switchFile(); err != nil {
				return errors.Join(err, rd.out.flush())
			}
			continue
		}
		if err := rd.out.flush(); err != nil {
			return err
		}
		if fl.rotated {
			fl.rotated = false
			fl.look()
		}
		if fl.switching || fl.next != nil && (fl.stopping || hasData(fl.next)) {
			// The runtime writes to the new file only once it is done
			// with the old one: drain the old one once more, then move.
			fl.switching = true
			continue
		}
		if fl.stopping {
			return nil
		}
		if askNow {
			askNow = false
			fl.stopping = !running()
			continue
		}
		in.rest(&sight{cur: fl.cur.info, off: fl.cur.offset(), next: fl.nextInfo})
		select {
		case <-ctx.Done():
			return fmt.Errorf("follow log %s: %w", rd.path, ctx.Err())
		case <-in.wake:
			news := in.take()
			if news&newsLook != 0 {
				fl.rotated = true
			}
			if news&newsStopped != 0 {
				fl.stopping = true
			}
		}
	}
}

// look opens the file at the path if it is neither cur's nor next's.
// Errors leave things as they are: a path not there yet is a rotation
// half done, and the next event or check looks again. What is not a
// regular file (a link, a FIFO a pod planted) is never opened: the
// follower stays on cur until the container stops.
func (fl *follower) look() {
	st, err := os.Lstat(fl.path)
	if err != nil || os.SameFile(st, fl.cur.info) {
		return
	}
	if fl.next != nil {
		if os.SameFile(st, fl.nextInfo) {
			return
		}
		// Rotated twice: the runtime is done with cur and with next.
		// Move on to next first, then look again.
		fl.switching, fl.rotated = true, true
		return
	}
	f, err := OpenLog(fl.dir, fl.path)
	if err != nil {
		return
	}
	st, err = f.Stat()
	if err != nil || os.SameFile(st, fl.cur.info) {
		f.Close()
		return
	}
	fl.next, fl.nextInfo = f, st
}

// switchFile leaves the drained cur for next, read from its start.
func (fl *follower) switchFile() error {
	fl.switching = false
	r, err := newLineReader(fl.next)
	fl.next, fl.nextInfo = nil, nil
	if err != nil {
		return fmt.Errorf("follow log %s: %w", fl.path, err)
	}
	// An unterminated line at the end of the old file will never be
	// finished: the runtime died mid-write. It is not carried over.
	fl.cur.close()
	fl.cur = r
	return nil
}

func hasData(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Size() > 0
}
