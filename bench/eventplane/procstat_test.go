package main

import "testing"

func TestStatTicks(t *testing.T) {
	f := func(line string, want uint64, wantErr bool) {
		t.Helper()
		got, err := statTicks(line)
		if (err != nil) != wantErr || got != want {
			t.Fatalf("statTicks(%q) = %d, %v; want %d, error %v", line, got, err, want, wantErr)
		}
	}
	// utime 7, stime 5 (fields 14 and 15).
	f("42 (podline) S 1 42 42 0 -1 4194560 900 0 0 0 7 5 0 0 20 0 9 0 100 0 0", 12, false)
	// A command name with spaces and a parenthesis must not shift fields.
	f("42 (a) b (c) S 1 42 42 0 -1 4194560 900 0 0 0 30 70 0 0 20 0 9 0 100 0 0", 100, false)
	f("42 (x) S 1 2", 0, true)
	f("garbage", 0, true)
}

func TestStatusSwitches(t *testing.T) {
	status := "Name:\tpodline\nThreads:\t9\nvoluntary_ctxt_switches:\t120\nnonvoluntary_ctxt_switches:\t3\n"
	if got := statusSwitches(status); got != 123 {
		t.Fatalf("statusSwitches = %d, want 123", got)
	}
}

func TestProcCostSince(t *testing.T) {
	before := procCost{threads: map[int]threadCost{
		1: {runNS: 100, ctxSwitches: 10},
		2: {runNS: 50, ctxSwitches: 5}, // exits meanwhile
	}}
	after := procCost{threads: map[int]threadCost{
		1: {runNS: 130, ctxSwitches: 14},
		3: {runNS: 7, ctxSwitches: 2}, // born meanwhile: counts whole
	}}
	run, sw := after.since(before)
	if run != 37 || sw != 6 {
		t.Fatalf("since = %d ns, %d switches; want 37, 6", run, sw)
	}
}
