package ebpf

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/podline/podline/cgroupfs"
	"golang.org/x/sys/unix"
)

// The tests make cgroups only under these directories of their own.
const (
	cgroup2Root  = "/sys/fs/cgroup/unified"
	memoryV1Root = "/sys/fs/cgroup/memory"
	testCgroups  = "podline-ebpf-test"
)

// requireKernel fails without root (a broken test setup) and skips only when
// the kernel lacks what the programs need.
func requireKernel(t testing.TB) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Fatal("these tests load BPF programs and make cgroups: run them as root")
	}
	if _, err := os.Stat(kernelBTF); errors.Is(err, fs.ErrNotExist) {
		t.Skipf("kernel has no BTF at %s", kernelBTF)
	}
	var st unix.Statfs_t
	if err := unix.Statfs(cgroup2Root, &st); err != nil || st.Type != unix.CGROUP2_SUPER_MAGIC {
		t.Skipf("no cgroup2 mount at %s (a hybrid-cgroup host)", cgroup2Root)
	}
}

func loadTracer(t testing.TB, hierarchy int32) *Tracer {
	t.Helper()
	requireKernel(t)
	tr, err := load(nil, hierarchy)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := tr.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return tr
}

type received struct {
	Event
	at time.Time // when Run handed it over
}

type collector struct{ ch chan received }

// collect runs tr.Run until the test ends.
func collect(t testing.TB, tr *Tracer) *collector {
	t.Helper()
	c := &collector{ch: make(chan received, 1<<15)}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- tr.Run(ctx, func(ev Event) { c.ch <- received{ev, time.Now()} })
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("Run: %v", err)
		}
	})
	return c
}

// expect returns the first event that matches, passing over others.
func (c *collector) expect(t testing.TB, what string, match func(Event) bool) received {
	t.Helper()
	timeout := time.After(5 * time.Second)
	for {
		select {
		case r := <-c.ch:
			if match(r.Event) {
				return r
			}
			t.Logf("while waiting for %s: passed over %+v", what, r.Event)
		case <-timeout:
			t.Fatalf("no event: %s", what)
		}
	}
}

// none fails if a matching event arrives within d.
func (c *collector) none(t testing.TB, what string, d time.Duration, match func(Event) bool) {
	t.Helper()
	timeout := time.After(d)
	for {
		select {
		case r := <-c.ch:
			if match(r.Event) {
				t.Fatalf("unexpected event (%s): %+v", what, r.Event)
			}
		case <-timeout:
			return
		}
	}
}

func exitIn(id uint64) func(Event) bool {
	return func(e Event) bool { return e.Kind == KindExit && e.CgroupID == id }
}

func emptied(id uint64) func(Event) bool {
	return func(e Event) bool { return e.Kind == KindEmptied && e.CgroupID == id }
}

// newCgroup makes a directory of the tests' own under root and removes it
// when the test ends.
func newCgroup(t testing.TB, root string) string {
	t.Helper()
	parent := filepath.Join(root, testCgroups)
	if err := os.Mkdir(parent, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp(parent, "cg-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// Reaped processes leave the cgroup a moment after wait returns.
		var err error
		for range 100 {
			if err = os.Remove(dir); err == nil || errors.Is(err, fs.ErrNotExist) {
				os.Remove(parent) // fails while other tests' cgroups exist
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
		t.Errorf("remove test cgroup: %v", err)
	})
	return dir
}

func inode(t testing.TB, dir string) uint64 {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Stat(dir, &st); err != nil {
		t.Fatal(err)
	}
	return st.Ino
}

func watchNew(t testing.TB, tr *Tracer) (dir string, id uint64) {
	t.Helper()
	dir = newCgroup(t, cgroup2Root)
	id, err := cgroupfs.CgroupID(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.Watch(id); err != nil {
		t.Fatal(err)
	}
	return dir, id
}

type proc struct {
	cmd    *exec.Cmd
	waited time.Time // when cmd.Wait returned
}

// command prepares a command whose first process is born in the cgroup2
// directory cg (clone3 CLONE_INTO_CGROUP) and, with pidNS, is pid 1 of a new
// pid namespace like a container's main process. cg "" keeps the test's
// cgroup.
func command(t testing.TB, cg string, pidNS bool, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(args[0], args[1:]...)
	cmd.SysProcAttr = &syscall.SysProcAttr{}
	if pidNS {
		cmd.SysProcAttr.Cloneflags = unix.CLONE_NEWPID
	}
	if cg != "" {
		f, err := os.Open(cg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		cmd.SysProcAttr.UseCgroupFD = true
		cmd.SysProcAttr.CgroupFD = int(f.Fd())
	}
	cmd.Stderr = os.Stderr
	return cmd
}

func start(t testing.TB, cg string, pidNS bool, args ...string) *proc {
	t.Helper()
	return startCmd(t, command(t, cg, pidNS, args...))
}

// helper prepares this test binary as one of TestMain's helpers.
func helper(t testing.TB, cg string, name string) *exec.Cmd {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := command(t, cg, true, exe)
	cmd.Env = append(os.Environ(), helperEnv+"="+name)
	return cmd
}

func startCmd(t testing.TB, cmd *exec.Cmd) *proc {
	t.Helper()
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %v: %v", cmd.Args, err)
	}
	p := &proc{cmd: cmd}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	return p
}

// wait returns the wait status; a non-zero exit is not an error here.
func (p *proc) wait(t testing.TB) syscall.WaitStatus {
	t.Helper()
	err := p.cmd.Wait()
	p.waited = time.Now()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	return p.cmd.ProcessState.Sys().(syscall.WaitStatus)
}

func (p *proc) pid() uint32 { return uint32(p.cmd.Process.Pid) }

func moveTo(t testing.TB, cg string, pid uint32) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(cg, "cgroup.procs"), []byte(strconv.Itoa(int(pid))), 0); err != nil {
		t.Fatalf("move %d to %s: %v", pid, cg, err)
	}
}

// memoryHierarchy returns the v1 memory hierarchy's id from
// /proc/self/cgroup, or skips on a host without one.
func memoryHierarchy(t testing.TB) int32 {
	t.Helper()
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		id, rest, _ := strings.Cut(line, ":")
		if ctrl, _, _ := strings.Cut(rest, ":"); ctrl == "memory" {
			n, err := strconv.Atoi(id)
			if err != nil {
				t.Fatal(err)
			}
			return int32(n)
		}
	}
	t.Skip("no cgroup v1 memory hierarchy (not a hybrid-cgroup host)")
	return 0
}
