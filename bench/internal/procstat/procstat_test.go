package procstat

import (
	"os"
	"testing"
)

func TestStatTicks(t *testing.T) {
	f := func(line string, user, sys, children uint64, wantErr bool) {
		t.Helper()
		u, s, c, err := StatTicks(line)
		if (err != nil) != wantErr || u != user || s != sys || c != children {
			t.Fatalf("StatTicks(%q) = %d, %d, %d, %v; want %d, %d, %d, error %v", line, u, s, c, err, user, sys, children, wantErr)
		}
	}
	// utime 7, stime 5, cutime 2, cstime 1 (fields 14 to 17).
	f("42 (podline) S 1 42 42 0 -1 4194560 900 0 0 0 7 5 2 1 20 0 9 0 100 0 0", 7, 5, 3, false)
	// A command name with spaces and a parenthesis must not shift fields.
	f("42 (a) b (c) S 1 42 42 0 -1 4194560 900 0 0 0 30 70 0 0 20 0 9 0 100 0 0", 30, 70, 0, false)
	f("42 (x) S 1 2", 0, 0, 0, true)
	f("garbage", 0, 0, 0, true)
}

func TestStatusFields(t *testing.T) {
	status := "Name:\tpodline\nVmHWM:\t  2048 kB\nVmRSS:\t  1024 kB\nThreads:\t9\nvoluntary_ctxt_switches:\t120\nnonvoluntary_ctxt_switches:\t3\n"
	if got := StatusSwitches(status); got != 123 {
		t.Fatalf("StatusSwitches = %d, want 123", got)
	}
	if got := statusKiB(status, "VmRSS"); got != 1024 {
		t.Fatalf("VmRSS = %d, want 1024", got)
	}
	if got := statusKiB(status, "VmSwap"); got != 0 {
		t.Fatalf("missing key = %d, want 0", got)
	}
}

func TestCostSince(t *testing.T) {
	before := Cost{Threads: map[int]Thread{
		1: {RunNS: 100, CtxSwitches: 10},
		2: {RunNS: 50, CtxSwitches: 5}, // exits meanwhile
	}}
	after := Cost{Threads: map[int]Thread{
		1: {RunNS: 130, CtxSwitches: 14},
		3: {RunNS: 7, CtxSwitches: 2}, // born meanwhile: counts whole
	}}
	run, sw := after.Since(before)
	if run != 37 || sw != 6 {
		t.Fatalf("Since = %d ns, %d switches; want 37, 6", run, sw)
	}
}

func TestReadSelf(t *testing.T) {
	c, err := Read(os.Getpid(), true)
	if err != nil {
		t.Fatal(err)
	}
	if c.RSS == 0 || c.HWM < c.RSS || len(c.Threads) == 0 {
		t.Fatalf("own process: RSS %d, HWM %d, %d threads", c.RSS, c.HWM, len(c.Threads))
	}
	if pids := ByName("no-such-process-name"); len(pids) != 0 {
		t.Fatalf("ByName found %v", pids)
	}
	comm, _ := os.ReadFile("/proc/self/comm")
	if pids := ByName(string(comm[:len(comm)-1])); len(pids) == 0 {
		t.Fatalf("ByName(%q) found nothing", comm)
	}
}
