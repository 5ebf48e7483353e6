package logs

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// t0 is the time of the test logs' first entry; entry i is i seconds on.
var t0 = time.Date(2026, 11, 25, 10, 10, 10, 0, time.UTC)

// cri makes a log entry line at t0+sec, as a runtime writes it.
func cri(sec int, stream, tag, content string) string {
	return fmt.Sprintf("%s %s %s %s\n", t0.Add(time.Duration(sec)*time.Second).Format(time.RFC3339Nano), stream, tag, content)
}

// stamp is how the output stamps an entry at t0+sec.
func stamp(sec int) string {
	return t0.Add(time.Duration(sec) * time.Second).Format(timeOut)
}

func writeLog(t testing.TB, lines ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "0.log")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "")), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func readLog(t *testing.T, path string, opts Options) string {
	t.Helper()
	var b strings.Builder
	if err := Read(context.Background(), filepath.Dir(path), path, opts, &b, nil); err != nil {
		t.Fatalf("Read: %v", err)
	}
	return b.String()
}

func ptr[T any](v T) *T { return &v }

// sample has a line split in three, a plain one, a malformed one and an
// empty one, over both streams.
var sample = []string{
	cri(0, "stdout", "F", "first"),
	cri(1, "stdout", "P", "lo"),
	cri(2, "stdout", "P", "ng "),
	cri(3, "stdout", "F", "line"),
	"torn line from a runtime killed mid-write\n",
	cri(4, "stderr", "F", "to stderr"),
	cri(5, "stdout", "F", ""),
	cri(6, "stdout", "F", "last"),
}

func TestReadOptions(t *testing.T) {
	path := writeLog(t, sample...)
	f := func(opts Options, want ...string) {
		t.Helper()
		if got := readLog(t, path, opts); got != strings.Join(want, "") {
			t.Errorf("Read(%+v) =\n%q\nwant\n%q", opts, got, strings.Join(want, ""))
		}
	}
	since := func(sec int) *time.Time { return ptr(t0.Add(time.Duration(sec) * time.Second)) }

	// Partial entries join into one line; malformed lines are skipped.
	f(Options{}, "first\n", "long line\n", "to stderr\n", "\n", "last\n")
	// A joined line carries its first part's time, fixed-width.
	f(Options{Timestamps: true},
		stamp(0)+" first\n", stamp(1)+" long line\n", stamp(4)+" to stderr\n", stamp(5)+" \n", stamp(6)+" last\n")
	// Since is per entry: an entry at the time itself is kept, and the
	// rest of a line whose start is too old comes without its stamp.
	f(Options{SinceTime: since(4)}, "to stderr\n", "\n", "last\n")
	f(Options{SinceTime: since(2), Timestamps: true}, "ng line\n", stamp(4)+" to stderr\n", stamp(5)+" \n", stamp(6)+" last\n")
	f(Options{SinceTime: since(7)})
	// The limit cuts mid-line, and mid-stamp, counting the stamp.
	f(Options{LimitBytes: ptr[int64](8)}, "first\nlo")
	f(Options{LimitBytes: ptr[int64](6)}, "first\n")
	f(Options{LimitBytes: ptr[int64](10), Timestamps: true}, stamp(0)[:10])
	f(Options{LimitBytes: ptr[int64](1000)}, "first\n", "long line\n", "to stderr\n", "\n", "last\n")
	// Tail counts the lines shown: a split line is one, never cut.
	f(Options{TailLines: ptr[int64](0)})
	f(Options{TailLines: ptr[int64](1)}, "last\n")
	f(Options{TailLines: ptr[int64](3)}, "to stderr\n", "\n", "last\n")
	f(Options{TailLines: ptr[int64](4), Timestamps: true},
		stamp(1)+" long line\n", stamp(4)+" to stderr\n", stamp(5)+" \n", stamp(6)+" last\n")
	f(Options{TailLines: ptr[int64](100)}, "first\n", "long line\n", "to stderr\n", "\n", "last\n")
	// Tail picks the lines, since and limit then apply to them.
	f(Options{TailLines: ptr[int64](4), SinceTime: since(4)}, "to stderr\n", "\n", "last\n")
	f(Options{TailLines: ptr[int64](4), LimitBytes: ptr[int64](12)}, "long line\n", "to")
}

func TestReadUnterminated(t *testing.T) {
	// The runtime is writing the last line: a plain read shows it as far
	// as it goes; a tail counts complete lines only.
	path := writeLog(t, cri(0, "stdout", "F", "one"), cri(1, "stdout", "F", "two"), strings.TrimSuffix(cri(2, "stdout", "F", "thr"), "\n"))
	if got, want := readLog(t, path, Options{}), "one\ntwo\nthr"; got != want {
		t.Errorf("Read = %q, want %q", got, want)
	}
	if got, want := readLog(t, path, Options{TailLines: ptr[int64](1)}), "two\n"; got != want {
		t.Errorf("Read(tail 1) = %q, want %q", got, want)
	}
}

func TestReadPartialAtEnd(t *testing.T) {
	// A line whose end is not written yet is the last line of a tail.
	path := writeLog(t, cri(0, "stdout", "F", "one"), cri(1, "stdout", "P", "tw"), cri(2, "stdout", "P", "o"))
	if got, want := readLog(t, path, Options{TailLines: ptr[int64](1), Timestamps: true}), stamp(1)+" two"; got != want {
		t.Errorf("Read(tail 1) = %q, want %q", got, want)
	}
	if got, want := readLog(t, path, Options{TailLines: ptr[int64](2)}), "one\ntwo"; got != want {
		t.Errorf("Read(tail 2) = %q, want %q", got, want)
	}
}

func TestReadLongLine(t *testing.T) {
	// Lines longer than the read buffer (a runtime configured not to
	// split) come out whole.
	long := strings.Repeat("x", 3*readBuffer+17)
	path := writeLog(t, cri(0, "stdout", "F", "a"), cri(1, "stdout", "F", long), cri(2, "stdout", "F", "b"))
	if got, want := readLog(t, path, Options{}), "a\n"+long+"\nb\n"; got != want {
		t.Errorf("Read = %d bytes, want %d", len(got), len(want))
	}
	if got, want := readLog(t, path, Options{TailLines: ptr[int64](2)}), long+"\nb\n"; got != want {
		t.Errorf("Read(tail 2) = %d bytes, want %d", len(got), len(want))
	}
}

func TestReadPaths(t *testing.T) {
	path := writeLog(t, cri(0, "stdout", "F", "hi"))
	// A link, even to a log, is refused: the paths podline reads have
	// none, and pods can plant them (see untrusted_test.go).
	link := filepath.Join(t.TempDir(), "pod_ns_c-id.log")
	if err := os.Symlink(path, link); err != nil {
		t.Fatal(err)
	}
	err := Read(context.Background(), filepath.Dir(link), link, Options{}, &strings.Builder{}, nil)
	if !errors.Is(err, ErrLink) || !strings.Contains(err.Error(), link) {
		t.Errorf("Read(symlink) = %v, want ErrLink naming the path", err)
	}
	missing := filepath.Join(t.TempDir(), "1.log")
	err = Read(context.Background(), filepath.Dir(missing), missing, Options{}, &strings.Builder{}, nil)
	if !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), missing) {
		t.Errorf("Read(missing) = %v, want ErrNotExist naming the path", err)
	}
}

func TestReadWriteError(t *testing.T) {
	path := writeLog(t, sample...)
	err := Read(context.Background(), filepath.Dir(path), path, Options{}, failingWriter{}, nil)
	if !errors.Is(err, errClientGone) {
		t.Errorf("Read = %v, want the writer's error", err)
	}
}

var errClientGone = errors.New("client gone")

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errClientGone }
