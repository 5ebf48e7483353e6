package cgroupfs

import (
	"bufio"
	"errors"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/containerd/cgroups/v3"
	"golang.org/x/sys/unix"
)

// statsTestParent is the only cgroup the stats tests create children in,
// in each hierarchy they use.
const statsTestParent = "podline-stats-test"

// statsHelperEnv selects the child's work in TestStatsHelperProcess.
const statsHelperEnv = "PODLINE_STATS_HELPER"

// TestStatsHelperProcess is not a test: it is the child process the host
// tests put in a cgroup, run as this test binary. It waits for a byte on
// stdin (by then it is in the cgroup), works, says "ready", then waits for
// stdin to close.
func TestStatsHelperProcess(t *testing.T) {
	work := os.Getenv(statsHelperEnv)
	if work == "" {
		return
	}
	in := bufio.NewReader(os.Stdin)
	in.ReadByte()
	switch work {
	case "work":
		// 300 ms of CPU, counted from the move into the cgroup.
		start := processCPU()
		for processCPU()-start < 300*time.Millisecond {
			for range 100000 {
			}
		}
		mem := make([]byte, 50<<20)
		for i := 0; i < len(mem); i += 4096 {
			mem[i] = 1
		}
		os.Stdout.WriteString("ready\n")
		io.Copy(io.Discard, in)
		runtime.KeepAlive(mem)
	case "burn":
		os.Stdout.WriteString("ready\n")
		for {
		}
	}
	os.Exit(0)
}

func processCPU() time.Duration {
	var ts unix.Timespec
	unix.ClockGettime(unix.CLOCK_PROCESS_CPUTIME_ID, &ts)
	return time.Duration(ts.Nano())
}

// hostCgroup is a cgroup this test made in some hierarchies.
type hostCgroup struct {
	rel  string   // relative to the hierarchy roots
	dirs []string // its directory in each hierarchy
}

// makeHostCgroup makes statsTestParent/<random> in each mount; cleanup
// removes it (and the parent, once no other test uses it).
func makeHostCgroup(t testing.TB, mounts ...string) hostCgroup {
	t.Helper()
	cg := hostCgroup{rel: "/" + statsTestParent + "/" + strconv.FormatUint(rand.Uint64(), 36)}
	t.Cleanup(func() {
		for _, dir := range cg.dirs {
			// A v1 cgroup of exited tasks may take a moment to let go.
			var err error
			for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
				err = os.Remove(dir)
				if err == nil || errors.Is(err, fs.ErrNotExist) || time.Now().After(deadline) {
					break
				}
			}
			if err != nil && !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("remove test cgroup: %v", err)
			}
			os.Remove(filepath.Dir(dir)) // fails while other tests use it
		}
	})
	for _, mnt := range mounts {
		dir := filepath.Join(mnt, cg.rel)
		if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		cg.dirs = append(cg.dirs, dir)
	}
	return cg
}

// startIn runs the helper doing work in cg and waits until it is ready.
// Cleanup (registered after the cgroup's, so it runs first) ends it.
func (cg hostCgroup) startIn(t testing.TB, work string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestStatsHelperProcess$")
	cmd.Env = append(os.Environ(), statsHelperEnv+"="+work)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	pid := strconv.Itoa(cmd.Process.Pid)
	for _, dir := range cg.dirs {
		if err := os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(pid), 0); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := stdin.Write([]byte{'g'}); err != nil {
		t.Fatal(err)
	}
	ready := make(chan error, 1)
	go func() {
		line, err := bufio.NewReader(stdout).ReadString('\n')
		if err == nil && line != "ready\n" {
			err = errors.New("helper said " + strconv.Quote(line))
		}
		ready <- err
	}()
	select {
	case err := <-ready:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("helper not ready after 20 s")
	}
	return cmd
}

func newHostReader(t *testing.T) *Reader {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Fatal("cgroup stats host tests need root")
	}
	if cgroups.Mode() == cgroups.Unified {
		t.Skip("cgroup v1 hierarchies not mounted on this unified host")
	}
	r, err := NewReader()
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// procTicks is utime+stime of a process, in USER_HZ ticks.
func procTicks(t *testing.T, pid int) uint64 {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		t.Fatal(err)
	}
	// Fields after the parenthesised command: state is field 3, utime 14.
	rest := string(b[strings.LastIndexByte(string(b), ')')+2:])
	f := strings.Fields(rest)
	utime, err1 := strconv.ParseUint(f[11], 10, 64)
	stime, err2 := strconv.ParseUint(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		t.Fatalf("parse %s: %v %v", b, err1, err2)
	}
	return utime + stime
}
