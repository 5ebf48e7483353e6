package ebpf

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

const helperEnv = "PODLINE_EBPF_TEST_HELPER"

// TestMain doubles as the helper processes the tests start (the test binary
// run again with helperEnv set): a memory hog for the OOM killer and two
// multi-threaded exits.
func TestMain(m *testing.M) {
	switch os.Getenv(helperEnv) {
	case "":
		os.Exit(m.Run())
	case "alloc":
		// Wait until the test has moved us into the limited memory cgroup.
		bufio.NewReader(os.Stdin).ReadString('\n')
		var keep [][]byte
		for range 256 {
			b := make([]byte, 1<<20)
			for i := 0; i < len(b); i += 4096 {
				b[i] = 1
			}
			keep = append(keep, b)
		}
		fmt.Fprintln(os.Stderr, "allocated", len(keep), "MiB without being killed")
		os.Exit(0)
	case "threads":
		// Several OS threads, each passing sched_process_exit on exit.
		ready := make(chan struct{})
		for range 4 {
			go func() {
				runtime.LockOSThread()
				ready <- struct{}{}
				select {}
			}()
		}
		for range 4 {
			<-ready
		}
		os.Exit(42)
	case "leader-exits-first":
		// The leader thread leaves with 7 while the process lives on; another
		// thread then ends the process with 5, which is what wait reports.
		// TestMain still runs on the main thread, the leader, where the
		// runtime started it.
		runtime.LockOSThread()
		if unix.Gettid() != unix.Getpid() {
			os.Exit(3)
		}
		go func() {
			runtime.LockOSThread()
			stat := fmt.Sprintf("/proc/self/task/%d/stat", unix.Getpid())
			for {
				b, err := os.ReadFile(stat)
				if _, after, _ := strings.Cut(string(b), ") "); err != nil || strings.HasPrefix(after, "Z") {
					os.Exit(5)
				}
				time.Sleep(time.Millisecond)
			}
		}()
		// Not RawSyscall: the runtime must hand this thread's P on.
		syscall.Syscall(unix.SYS_EXIT, 7, 0, 0)
	}
	os.Exit(2)
}
