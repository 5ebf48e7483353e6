package logs

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// syncWriter is a client: it gets writes from Read's goroutine and
// flushes are counted, as an http.ResponseWriter would see them.
type syncWriter struct {
	mu      sync.Mutex
	b       strings.Builder
	flushes int
	changed chan struct{}
}

func newSyncWriter() *syncWriter { return &syncWriter{changed: make(chan struct{}, 1)} }

func (w *syncWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (w *syncWriter) Flush() {
	w.mu.Lock()
	w.flushes++
	w.mu.Unlock()
	select {
	case w.changed <- struct{}{}:
	default:
	}
}

func (w *syncWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

// waitFor waits until the client has been flushed want.
func (w *syncWriter) waitFor(t *testing.T, want string) {
	t.Helper()
	deadline := time.After(5 * time.Second)
	for w.String() != want {
		select {
		case <-w.changed:
		case <-deadline:
			t.Fatalf("client has %q, want %q", w.String(), want)
		}
	}
}

// follow starts Read with Follow on path, beneath dir; the returned
// function waits for it to return and gives its error.
func follow(t *testing.T, ctx context.Context, dir, path string, opts Options, running func() bool) (*syncWriter, func() error) {
	t.Helper()
	w := newSyncWriter()
	done := make(chan error, 1)
	opts.Follow = true
	go func() { done <- Read(ctx, dir, path, opts, w, running) }()
	wait := func() error {
		t.Helper()
		select {
		case err := <-done:
			return err
		case <-time.After(5 * time.Second):
			t.Fatal("Read did not return")
			return nil
		}
	}
	return w, wait
}

// setCheckEvery makes the hub check the followers of one test that
// often; a long one shows that only an event could have woken them. The
// hub reads it when its first follower comes.
func setCheckEvery(t *testing.T, d time.Duration) {
	old := checkEvery
	checkEvery = d
	t.Cleanup(func() { checkEvery = old })
}

func appendLog(t *testing.T, path string, lines ...string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, l := range lines {
		// One write a line, as a runtime writes.
		if _, err := f.WriteString(l); err != nil {
			t.Fatal(err)
		}
	}
}

func TestFollowAppended(t *testing.T) {
	setCheckEvery(t, time.Hour)
	path := writeLog(t, cri(0, "stdout", "F", "old"), cri(1, "stdout", "F", "older"))
	ctx, cancel := context.WithCancel(context.Background())
	w, wait := follow(t, ctx, filepath.Dir(path), path, Options{TailLines: ptr[int64](0)}, nil)
	// Tail 0 shows nothing of what was there, and then what comes.
	waitFlushed(t, w)
	appendLog(t, path, cri(2, "stdout", "P", "ne"))
	appendLog(t, path, cri(3, "stdout", "F", "w"))
	w.waitFor(t, "new\n")
	// Half a line is held back until the runtime writes the rest.
	line := cri(4, "stderr", "F", "split write")
	appendLog(t, path, line[:20])
	appendLog(t, path, line[20:])
	w.waitFor(t, "new\nsplit write\n")
	cancel()
	if err := wait(); !errors.Is(err, context.Canceled) {
		t.Errorf("Read after cancel = %v, want context.Canceled", err)
	}
}

func waitFlushed(t *testing.T, w *syncWriter) {
	t.Helper()
	select {
	case <-w.changed:
	case <-time.After(5 * time.Second):
		t.Fatal("no flush before waiting for the log")
	}
}

func TestFollowRotation(t *testing.T) {
	setCheckEvery(t, time.Hour)
	path := writeLog(t, cri(0, "stdout", "F", "one"))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w, wait := follow(t, ctx, filepath.Dir(path), path, Options{}, nil)
	w.waitFor(t, "one\n")

	// The kubelet's rotation: rename away, then the runtime reopens. The
	// runtime may still write to the old file until it has reopened.
	old, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	if err := os.Rename(path, path+".20261125-101010"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, nil, 0o640); err != nil {
		t.Fatal(err)
	}
	// Give the follower time to see the new file before the late line.
	time.Sleep(30 * time.Millisecond)
	old.WriteString(cri(1, "stdout", "F", "two, late into the old file"))
	appendLog(t, path, cri(2, "stdout", "F", "three"))
	w.waitFor(t, "one\ntwo, late into the old file\nthree\n")

	// And again: the follower keeps up with every rotation.
	if err := os.Rename(path, path+".20261125-111111"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(cri(3, "stdout", "F", "four")), 0o640); err != nil {
		t.Fatal(err)
	}
	w.waitFor(t, "one\ntwo, late into the old file\nthree\nfour\n")
	cancel()
	wait()
}

func TestFollowStops(t *testing.T) {
	setCheckEvery(t, 20*time.Millisecond)
	path := writeLog(t, cri(0, "stdout", "F", "one"))
	var up atomic.Bool
	up.Store(true)
	w, wait := follow(t, context.Background(), filepath.Dir(path), path, Options{}, up.Load)
	w.waitFor(t, "one\n")
	// The container's last words are written, then it is seen stopped.
	appendLog(t, path, cri(1, "stdout", "F", "two"))
	up.Store(false)
	if err := wait(); err != nil {
		t.Errorf("Read after the container stopped = %v", err)
	}
	if got := w.String(); got != "one\ntwo\n" {
		t.Errorf("Read = %q, want every line", got)
	}
}

func TestFollowStoppedBeforehand(t *testing.T) {
	// An exited container's log is read and Read returns at once, not at
	// the first check.
	setCheckEvery(t, time.Hour)
	path := writeLog(t, cri(0, "stdout", "F", "one"), cri(1, "stdout", "F", "two"))
	w, wait := follow(t, context.Background(), filepath.Dir(path), path, Options{TailLines: ptr[int64](1)}, func() bool { return false })
	if err := wait(); err != nil || w.String() != "two\n" {
		t.Errorf("Read = %q, %v", w.String(), err)
	}
}

func TestFollowStoppedAfterRotation(t *testing.T) {
	// Rotated, and the runtime never wrote to the new file: the old
	// file's lines are all there is.
	setCheckEvery(t, 20*time.Millisecond)
	path := writeLog(t, cri(0, "stdout", "F", "one"))
	var up atomic.Bool
	up.Store(true)
	w, wait := follow(t, context.Background(), filepath.Dir(path), path, Options{}, up.Load)
	w.waitFor(t, "one\n")
	old, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	if err := os.Rename(path, path+".1"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, nil, 0o640); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond)
	old.WriteString(cri(1, "stdout", "F", "two"))
	up.Store(false)
	if err := wait(); err != nil || w.String() != "one\ntwo\n" {
		t.Errorf("Read = %q, %v", w.String(), err)
	}
}

func TestFollowLimit(t *testing.T) {
	setCheckEvery(t, time.Hour)
	path := writeLog(t, cri(0, "stdout", "F", "one"))
	w, wait := follow(t, context.Background(), filepath.Dir(path), path, Options{LimitBytes: ptr[int64](7)}, nil)
	w.waitFor(t, "one\n")
	appendLog(t, path, cri(1, "stdout", "F", "two"))
	if err := wait(); err != nil || w.String() != "one\ntwo" {
		t.Errorf("Read = %q, %v; want the limit to end the follow", w.String(), err)
	}
}
