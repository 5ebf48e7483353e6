package main

import (
	"slices"
	"testing"
	"time"
)

// The relist that stands in for an absent event stream runs every second
// until a kernel source runs: a cgroup notifier still waiting for an
// inotify instance, with no eBPF, watches no pod, and used to count as
// one (a relist every minute, an exit seen up to a minute late). It
// switches as the sources start and stop, and without pod cgroups no
// source counts.
func TestStandInFollowsTheKernelSourcesRunning(t *testing.T) {
	const s, m = time.Second, time.Minute
	f := func(perPod bool, steps string, want ...time.Duration) {
		t.Helper()
		var got []time.Duration
		k := newKernelSources(perPod, func(d time.Duration) { got = append(got, d) })
		for _, c := range steps {
			switch c {
			case '+':
				k.started()
			case '-':
				k.stopped()
			}
		}
		if !slices.Equal(got, want) {
			t.Fatalf("perPod %v, %q: periods %v, want %v", perPod, steps, got, want)
		}
	}
	f(true, "", s)                     // the notifier still retrying, no eBPF
	f(true, "+", s, m)                 // the notifier started at last
	f(true, "++-", s, m, m, m)         // eBPF and the notifier, one stopped
	f(true, "+-", s, m, s)             // the only source stopped
	f(false, "++", s, s, s)            // no pod cgroups: no source sees an exit
	f(true, "++--+", s, m, m, m, s, m) // the notifier started again
}
