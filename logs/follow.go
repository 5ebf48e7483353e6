package logs

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"
)

// checkEvery is how often a follower asks whether the container still
// runs and looks at its path for a rotation it was not told of. It bounds
// how long `kubectl logs -f` hangs on after the container exits; between
// checks an idle follower sleeps on its watcher and this one timer.
var checkEvery = 2 * time.Second

// follower is a follow request's state between waits.
type follower struct {
	*reading
	cur *lineReader
	// next is the file now at the path when it is no longer cur's: the
	// rotation renamed cur away and the runtime made a new one.
	next      *os.File
	switching bool // cur is to be drained once more, then next read
	rotated   bool // the path may name another file: look
	stopping  bool // the container stopped: drain, then return
}

// follow writes r's file from its current offset on, waiting on the log
// directory for writes and for the kubelet's rotation (rename away, new
// file at the path).
func (rd *reading) follow(ctx context.Context, r *lineReader, running func() bool) error {
	watcher, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("follow log %s: %w", rd.path, err)
	}
	defer watcher.Close()
	// Watching the directory, not the file, sees the new file appear.
	// Watching before the first read leaves no gap for a write to fall in.
	dir, base := filepath.Split(rd.path)
	if err := watcher.Add(dir); err != nil {
		return fmt.Errorf("follow log %s: watch %s: %w", rd.path, dir, err)
	}
	fl := &follower{reading: rd, cur: r}
	defer func() {
		fl.cur.close()
		if fl.next != nil {
			fl.next.Close()
		}
	}()
	timer := time.NewTimer(checkEvery)
	defer timer.Stop()
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
		select {
		case <-ctx.Done():
			return fmt.Errorf("follow log %s: %w", rd.path, ctx.Err())
		case ev, ok := <-watcher.Events:
			if !ok {
				return fmt.Errorf("follow log %s: watcher closed", rd.path)
			}
			if filepath.Base(ev.Name) == base && ev.Has(fsnotify.Create|fsnotify.Rename|fsnotify.Remove) {
				fl.rotated = true
			}
		case _, ok := <-watcher.Errors:
			if !ok {
				return fmt.Errorf("follow log %s: watcher closed", rd.path)
			}
			// An overflow drops events, a Create among them perhaps.
			fl.rotated = true
		case <-timer.C:
			timer.Reset(checkEvery)
			fl.rotated = true
			fl.stopping = running != nil && !running()
		}
	}
}

// look opens the file at the path if it is neither cur's nor next's.
// Errors leave things as they are: a path not there yet is a rotation
// half done, and the next event or check looks again.
func (fl *follower) look() {
	st, err := os.Stat(fl.path)
	if err != nil || os.SameFile(st, fl.cur.info) {
		return
	}
	if fl.next != nil {
		if nst, err := fl.next.Stat(); err == nil && os.SameFile(st, nst) {
			return
		}
		// Rotated twice: the runtime is done with cur and with next.
		// Move on to next first, then look again.
		fl.switching, fl.rotated = true, true
		return
	}
	f, err := os.Open(fl.path)
	if err != nil {
		return
	}
	if st, err := f.Stat(); err != nil || os.SameFile(st, fl.cur.info) {
		f.Close()
		return
	}
	fl.next = f
}

// switchFile leaves the drained cur for next, read from its start.
func (fl *follower) switchFile() error {
	fl.switching = false
	r, err := newLineReader(fl.next)
	fl.next = nil
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
