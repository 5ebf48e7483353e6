package machine

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// writeFixture writes content to a file in a temp dir and returns its path.
func writeFixture(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestReadCPUUsage(t *testing.T) {
	got, err := ReadCPUUsage("testdata/proc-stat")
	// user 590190 + nice 17 + system 240992 + irq 3 + softirq 4088 + steal 4593 ticks.
	if want := uint64(590190+17+240992+3+4088+4593) * 10e6; err != nil || got != want {
		t.Fatalf("ReadCPUUsage = %d, %v; want %d", got, err, want)
	}
	f := func(content string, want uint64, wantErr string) {
		t.Helper()
		got, err := ReadCPUUsage(writeFixture(t, "stat", content))
		if wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), wantErr) {
				t.Errorf("%q: %d, %v; want an error with %q", content, got, err, wantErr)
			}
			return
		}
		if err != nil || got != want {
			t.Errorf("%q: %d, %v; want %d", content, got, err, want)
		}
	}
	f("cpu  1 2 3 4 5 6 7 8\ncpu0 1 2 3 4 5 6 7 8\n", (1+2+3+6+7+8)*10e6, "")
	f("cpu  1 2 3 4 5 6 7 8 9 10\n", (1+2+3+6+7+8)*10e6, "") // guest time is in user already
	f("cpu  1 2 3 4 5 6 7\n", 0, "at least 8")
	f("cpu0 1 2 3 4 5 6 7 8\n", 0, "not the cpu total")
	f("cpu  1 2 x 4 5 6 7 8\n", 0, "invalid syntax")
	f("", 0, "not the cpu total")
	if _, err := ReadCPUUsage(filepath.Join(t.TempDir(), "missing")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}

// This node's busy time grows at least by what this process burns, and
// never beyond wall time on every CPU since boot.
func TestReadCPUUsageHost(t *testing.T) {
	before, err := ReadCPUUsage(ProcStat)
	if err != nil {
		t.Fatal(err)
	}
	burnStart := processCPU()
	for processCPU()-burnStart < 200*time.Millisecond {
		for range 10000 {
		}
	}
	after, err := ReadCPUUsage(ProcStat)
	if err != nil {
		t.Fatal(err)
	}
	// Ticks land on whichever CPU was busy at each tick: allow 30 ms.
	if grew := time.Duration(after - before); grew < 170*time.Millisecond {
		t.Errorf("node busy time grew %v while this process burned 200ms", grew)
	}
	uptime, err := os.ReadFile("/proc/uptime")
	if err != nil {
		t.Fatal(err)
	}
	up, err := time.ParseDuration(strings.Fields(string(uptime))[0] + "s")
	if err != nil {
		t.Fatal(err)
	}
	if limit := up * time.Duration(runtime.NumCPU()); time.Duration(after) > limit {
		t.Errorf("busy time %v exceeds uptime × CPUs %v", time.Duration(after), limit)
	}
}

// processCPU is this process's CPU time, every thread included (a
// goroutine may change threads, so a thread clock would not do).
func processCPU() time.Duration {
	var ts unix.Timespec
	unix.ClockGettime(unix.CLOCK_PROCESS_CPUTIME_ID, &ts)
	return time.Duration(ts.Nano())
}
