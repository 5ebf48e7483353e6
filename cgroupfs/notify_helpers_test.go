package cgroupfs

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// notifyTestParent is the only cgroup the notifier tests create children
// in, in the cgroup2 mount and the v1 memory hierarchy.
const notifyTestParent = "podline-notify-test"

// received collects what Run delivers.
type received struct {
	ch <-chan Notification
}

// runNotifier starts Run and stops it (checking it returned nil) and Closes
// the notifier at cleanup.
func runNotifier(t *testing.T, n *Notifier) received {
	t.Helper()
	ch := make(chan Notification, 8192)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- n.Run(ctx, func(nt Notification) { ch <- nt }) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Run: %v", err)
			}
		case <-time.After(5 * time.Second):
			t.Error("Run did not return after its context ended")
		}
	})
	return received{ch: ch}
}

func newTestNotifier(t *testing.T) *Notifier {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Fatal("cgroup notifier tests need root")
	}
	n, err := NewNotifier(slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug})))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := n.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return n
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

// next waits for the next notification.
func (r received) next(t *testing.T, timeout time.Duration) (Notification, bool) {
	t.Helper()
	select {
	case nt := <-r.ch:
		return nt, true
	case <-time.After(timeout):
		return Notification{}, false
	}
}

// expect waits for a notification of kind for id, failing on any other.
func (r received) expect(t *testing.T, kind NotifyKind, id uint64, timeout time.Duration) Notification {
	t.Helper()
	nt, ok := r.next(t, timeout)
	if !ok {
		t.Fatalf("no %v notification for cgroup %d within %v", kind, id, timeout)
	}
	if nt.Kind != kind || nt.CgroupID != id {
		t.Fatalf("got %+v, want %v for cgroup %d", nt, kind, id)
	}
	return nt
}

// expectNone fails if anything is delivered within d.
func (r received) expectNone(t *testing.T, d time.Duration) {
	t.Helper()
	if nt, ok := r.next(t, d); ok {
		t.Fatalf("unexpected notification %+v", nt)
	}
}

// testCgroup is one container-like cgroup the test owns.
type testCgroup struct {
	rel string // relative to the hierarchy roots, what Watch takes
	v2  string // cgroup2 directory
	mem string // v1 memory directory, "" when memory is on cgroup2
}

// makeTestCgroup creates a cgroup under notifyTestParent in the cgroup2
// mount and, with v1 memory, in the memory hierarchy; cleanup kills what
// runs in it and removes it.
func makeTestCgroup(t testing.TB, n *Notifier) testCgroup {
	t.Helper()
	rel := "/" + notifyTestParent + "/" + strconv.FormatUint(rand.Uint64(), 36)
	cg := testCgroup{rel: rel, v2: filepath.Join(n.cgroup2, rel)}
	if n.memoryV1 != "" {
		cg.mem = filepath.Join(n.memoryV1, rel)
	}
	for _, dir := range []string{cg.v2, cg.mem} {
		if dir == "" {
			continue
		}
		if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { cg.remove(t) })
	return cg
}

func (cg testCgroup) remove(t testing.TB) {
	t.Helper()
	if populated, err := Populated(cg.v2); err == nil && populated {
		if err := os.WriteFile(filepath.Join(cg.v2, "cgroup.kill"), []byte("1"), 0); err != nil {
			t.Errorf("kill %s: %v", cg.v2, err)
		}
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
			if populated, err := Populated(cg.v2); err != nil || !populated {
				break
			}
		}
	}
	for _, dir := range []string{cg.mem, cg.v2} {
		if dir == "" {
			continue
		}
		if err := os.Remove(dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("remove test cgroup: %v", err)
		}
		os.Remove(filepath.Dir(dir)) // the shared parent, once its last child is gone
	}
}

// start runs argv in the cgroup: born in the cgroup2 directory
// (CLONE_INTO_CGROUP), then moved into the v1 memory cgroup. The command
// should wait on stdin until told to go; write to the returned pipe.
func (cg testCgroup) start(t *testing.T, argv ...string) (*exec.Cmd, *os.File) {
	t.Helper()
	dirfd, err := unix.Open(cg.v2, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(dirfd)
	stdinR, stdinW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin = stdinR
	cmd.SysProcAttr = &unix.SysProcAttr{UseCgroupFD: true, CgroupFD: dirfd}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stdinR.Close()
	t.Cleanup(func() {
		stdinW.Close()
		cmd.Process.Kill()
		cmd.Wait()
	})
	if cg.mem != "" {
		pid := strconv.Itoa(cmd.Process.Pid)
		if err := os.WriteFile(filepath.Join(cg.mem, "cgroup.procs"), []byte(pid), 0); err != nil {
			t.Fatal(err)
		}
	}
	return cmd, stdinW
}

// openFDs counts this process's open file descriptors.
func openFDs(t testing.TB) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(ents) - 1 // the directory being read
}

// inotifyWatches counts the inotify watches this process holds.
func inotifyWatches(t testing.TB) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, e := range ents {
		if target, _ := os.Readlink("/proc/self/fd/" + e.Name()); target != "anon_inode:inotify" {
			continue
		}
		info, err := os.ReadFile("/proc/self/fdinfo/" + e.Name())
		if err != nil {
			continue
		}
		total += strings.Count(string(info), "inotify wd:")
	}
	return total
}

// cpuTime is the user+system CPU this process used so far.
func cpuTime(t testing.TB) time.Duration {
	t.Helper()
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
