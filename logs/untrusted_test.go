package logs

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// What a pod with a hostPath volume on a log directory can plant where a
// log should be: a symlink to a file of the host, a FIFO (an open for
// reading waits for a writer forever), a device node (an open runs its
// driver's open, as root). None of it may be read, nor opened.

// secretLog is a file of the host in the CRI log format: what a link
// would serve as a container's log.
func secretLog(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "secret.log")
	if err := os.WriteFile(path, []byte(cri(0, "stdout", "F", "secret of the host")), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// podLogDir makes <root>/ns_pod_uid/c as stages make it and returns
// both: root stands for the pod log directory.
func podLogDir(t *testing.T) (root, dir string) {
	t.Helper()
	root = filepath.Join(t.TempDir(), "pods")
	dir = filepath.Join(root, "ns_pod_uid", "c")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return root, dir
}

// mknod makes a character device with /dev/null's numbers: harmless if a
// broken reader opens it, and the open shows in inotify all the same.
func mknod(t *testing.T, path string) {
	t.Helper()
	if err := unix.Mknod(path, unix.S_IFCHR|0o644, int(unix.Mkdev(1, 3))); err != nil {
		t.Fatalf("mknod (the unit tests run as root): %v", err)
	}
}

// openWatch reports every open of the files it watches, O_PATH lookups
// aside (they open nothing).
type openWatch struct {
	t  *testing.T
	fd int
}

func watchOpens(t *testing.T, paths ...string) *openWatch {
	t.Helper()
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	for _, p := range paths {
		// IN_DONT_FOLLOW: the node itself, not what a link points to.
		if _, err := unix.InotifyAddWatch(fd, p, unix.IN_OPEN|unix.IN_DONT_FOLLOW); err != nil {
			t.Fatal(err)
		}
	}
	return &openWatch{t: t, fd: fd}
}

// opened reports whether any watched file was opened so far. The kernel
// queues the event in the open itself, so a finished request's opens
// are all there.
func (o *openWatch) opened() bool {
	buf := make([]byte, 4096)
	n, err := unix.Read(o.fd, buf)
	if errors.Is(err, unix.EAGAIN) {
		return false
	}
	if err != nil {
		o.t.Fatal(err)
	}
	return n > 0
}

// readWithin runs Read and fails the test if it is still in an open
// after a while (a FIFO): writing to the FIFO then lets it go.
func readWithin(t *testing.T, root, path string, opts Options, fifo string) (string, error) {
	t.Helper()
	var out strings.Builder
	done := make(chan error, 1)
	go func() { done <- Read(context.Background(), root, path, opts, &out, func() bool { return false }) }()
	select {
	case err := <-done:
		return out.String(), err
	case <-time.After(10 * time.Second):
		if fifo != "" {
			release(fifo)
		}
		<-done
		t.Fatalf("Read of %s hung in open", path)
		return "", nil
	}
}

func TestReadRefusesWhatAPodPlanted(t *testing.T) {
	secret := secretLog(t)
	f := func(name string, plant func(dir string) (path, fifo string), want error) {
		t.Helper()
		t.Run(name, func(t *testing.T) {
			root, dir := podLogDir(t)
			path, fifo := plant(dir)
			watch := watchOpens(t, path, secret)
			for _, opts := range []Options{{}, {Follow: true}, {TailLines: ptr[int64](10)}} {
				out, err := readWithin(t, root, path, opts, fifo)
				if !errors.Is(err, want) {
					t.Errorf("Read(%+v) = %v, want %v", opts, err, want)
				}
				if out != "" {
					t.Errorf("Read(%+v) wrote %q", opts, out)
				}
			}
			if watch.opened() {
				t.Errorf("%s (or the host file) was opened", path)
			}
		})
	}
	f("symlinked log file", func(dir string) (string, string) {
		path := filepath.Join(dir, "0.log")
		if err := os.Symlink(secret, path); err != nil {
			t.Fatal(err)
		}
		return path, ""
	}, ErrLink)
	f("symlinked container directory", func(dir string) (string, string) {
		// The container's directory swapped for a link to a directory
		// of the host holding a 0.log.
		other := filepath.Dir(secret)
		if err := os.Link(secret, filepath.Join(other, "0.log")); err != nil {
			t.Fatal(err)
		}
		if err := os.Remove(dir); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(other, dir); err != nil {
			t.Fatal(err)
		}
		return filepath.Join(dir, "0.log"), ""
	}, ErrLink)
	f("symlinked pod directory", func(dir string) (string, string) {
		pod := filepath.Dir(dir)
		host := t.TempDir()
		if err := os.MkdirAll(filepath.Join(host, "c"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Link(secret, filepath.Join(host, "c", "1.log")); err != nil {
			t.Fatal(err)
		}
		if err := os.RemoveAll(pod); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(host, pod); err != nil {
			t.Fatal(err)
		}
		return filepath.Join(dir, "1.log"), ""
	}, ErrLink)
	f("FIFO", func(dir string) (string, string) {
		path := filepath.Join(dir, "0.log")
		if err := unix.Mkfifo(path, 0o644); err != nil {
			t.Fatal(err)
		}
		return path, path
	}, ErrNotRegular)
	f("device node", func(dir string) (string, string) {
		path := filepath.Join(dir, "0.log")
		mknod(t, path)
		return path, ""
	}, ErrNotRegular)
}

// --pod-logs-dir is resolved once at start. A link made above it since
// (the operator moving /var/log to another disk) is the operator's, and
// the runtime writes through it: the logs are read through it too, plain,
// tailed and followed. Beneath it a link is refused all the same.
func TestReadThroughALinkAboveThePodLogDir(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "var", "log", "pods") // as resolved at start
	dir := filepath.Join(root, "ns_pod_uid", "c")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "0.log")
	if err := os.WriteFile(path, []byte(cri(0, "stdout", "F", "hello")), 0o644); err != nil {
		t.Fatal(err)
	}
	// After start: /var/log moves, and a link takes its place.
	moved := filepath.Join(base, "disk2", "log")
	if err := os.MkdirAll(filepath.Dir(moved), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(base, "var", "log"), moved); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(moved, filepath.Join(base, "var", "log")); err != nil {
		t.Fatal(err)
	}
	for _, opts := range []Options{{}, {TailLines: ptr[int64](1)}} {
		if out, err := readWithin(t, root, path, opts, ""); err != nil || out != "hello\n" {
			t.Errorf("Read(%+v) = %q, %v, want the log", opts, out, err)
		}
	}
	w, wait := follow(t, context.Background(), root, path, Options{}, func() bool { return false })
	if err := wait(); err != nil || w.String() != "hello\n" {
		t.Errorf("Read(follow) = %q, %v, want the log", w.String(), err)
	}
	f, err := OpenLog(root, path)
	if err != nil {
		t.Fatalf("OpenLog: %v", err)
	}
	f.Close()

	// Beneath the pod log directory, a link is no more followed than
	// before: the pod's directory swapped for one to a host directory.
	host := t.TempDir()
	if err := os.MkdirAll(filepath.Join(host, "c"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(secretLog(t), filepath.Join(host, "c", "0.log")); err != nil {
		t.Fatal(err)
	}
	pod := filepath.Dir(dir)
	if err := os.RemoveAll(pod); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(host, pod); err != nil {
		t.Fatal(err)
	}
	if out, err := readWithin(t, root, path, Options{}, ""); !errors.Is(err, ErrLink) || out != "" {
		t.Errorf("Read through a link beneath = %q, %v, want ErrLink", out, err)
	}
}

// A path that is not beneath the pod log directory given with it is a
// caller's bug: refused, never opened from anywhere else.
func TestOpenLogOutsideItsDirectory(t *testing.T) {
	root, dir := podLogDir(t)
	path := filepath.Join(dir, "0.log")
	if err := os.WriteFile(path, []byte(cri(0, "stdout", "F", "hello")), 0o644); err != nil {
		t.Fatal(err)
	}
	f := func(dir, path string) {
		t.Helper()
		if fd, err := OpenLog(dir, path); err == nil || !strings.HasPrefix(err.Error(), "BUG: ") {
			if fd != nil {
				fd.Close()
			}
			t.Errorf("OpenLog(%q, %q) = %v, want a BUG: error", dir, path, err)
		}
	}
	f(filepath.Join(root, "ns_pod_uid", "other"), path)
	f("", path)
	f("pods", path)
}

// A follower reopens the path after a rotation: what a pod puts there
// in place of the new file is not followed.
func TestFollowRefusesPlantedRotation(t *testing.T) {
	secret := secretLog(t)
	f := func(name string, plant func(path string)) {
		t.Helper()
		t.Run(name, func(t *testing.T) {
			setCheckEvery(t, 20*time.Millisecond)
			root, dir := podLogDir(t)
			path := filepath.Join(dir, "0.log")
			if err := os.WriteFile(path, []byte(cri(0, "stdout", "F", "one")), 0o644); err != nil {
				t.Fatal(err)
			}
			var up atomic.Bool
			up.Store(true)
			w, wait := follow(t, context.Background(), root, path, Options{}, up.Load)
			w.waitFor(t, "one\n")
			old, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer old.Close()
			if err := os.Rename(path, path+".1"); err != nil {
				t.Fatal(err)
			}
			plant(path)
			watch := watchOpens(t, secret)
			// The runtime goes on writing to the file it has open: a
			// follower that is still on it (not stuck in an open, not
			// moved to what was planted) shows the line.
			old.WriteString(cri(1, "stdout", "F", "two"))
			w.waitFor(t, "one\ntwo\n")
			up.Store(false)
			if err := wait(); err != nil || w.String() != "one\ntwo\n" {
				t.Errorf("Read = %q, %v", w.String(), err)
			}
			if watch.opened() {
				t.Errorf("the host file was opened")
			}
		})
	}
	f("symlink", func(path string) {
		if err := os.Symlink(secret, path); err != nil {
			t.Fatal(err)
		}
	})
	f("FIFO", func(path string) {
		if err := unix.Mkfifo(path, 0o644); err != nil {
			t.Fatal(err)
		}
		releaseFIFO(t, path)
	})
}

// releaseFIFO lets a reader stuck opening fifo go when the test ends (a
// writer's non-blocking open succeeds only while a reader waits), so a
// broken reader fails the test instead of hanging it.
func releaseFIFO(t *testing.T, fifo string) {
	t.Cleanup(func() { release(fifo) })
}

func release(fifo string) {
	if f, err := os.OpenFile(fifo, os.O_WRONLY|unix.O_NONBLOCK, 0); err == nil {
		f.Close()
	}
}

// /logs/ answers a FIFO, a device or a socket with a 403 that says what
// it is, and never opens it.
func TestNodeLogsNeverOpensSpecialFiles(t *testing.T) {
	root := t.TempDir()
	fifo, dev := filepath.Join(root, "fifo"), filepath.Join(root, "dev")
	if err := unix.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	mknod(t, dev)
	// A link inside the directory to the device is followed as any link
	// that stays inside: to the same refusal.
	if err := os.Symlink("dev", filepath.Join(root, "to-dev")); err != nil {
		t.Fatal(err)
	}
	watch := watchOpens(t, fifo, dev)
	mux := http.NewServeMux()
	mux.Handle("GET /logs/", http.StripPrefix("/logs", NodeLogs(root)))
	f := func(path, want string) {
		t.Helper()
		rec := httptest.NewRecorder()
		done := make(chan struct{})
		go func() {
			defer close(done)
			mux.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
		}()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			release(fifo)
			<-done
			t.Fatalf("GET %s hung", path)
		}
		if rec.Code != http.StatusForbidden || !strings.Contains(rec.Body.String(), want) {
			t.Errorf("GET %s = %d %q, want 403 with %q", path, rec.Code, rec.Body, want)
		}
		if watch.opened() {
			t.Errorf("GET %s opened the node", path)
		}
	}
	f("/logs/fifo", "not a regular file: a named pipe")
	f("/logs/dev", "not a regular file: a character device")
	f("/logs/to-dev", "not a regular file: a character device")
}
