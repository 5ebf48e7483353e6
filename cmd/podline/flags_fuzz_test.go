package main

import (
	"io"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/podline/podline/node"
)

// fuzzFlags are the flags FuzzFlags sets: the quantity, resource-list and
// threshold flags, the flag.Value types, and the numbers with a range.
var fuzzFlags = []string{
	"kube-reserved", "system-reserved", "eviction-hard", "stage-workers", "node-labels", "register-with-taints",
	"cluster-dns", "allowed-unsafe-sysctls", "pleg-sources", "manifest-url-header", "start-concurrency",
	"kube-api-qps", "event-qps", "max-pods", "tls-cipher-suites", "tls-min-version", "anonymous-auth",
}

// FuzzFlags gives one flag any value. Whatever the flag package or
// validate refuses, the error names the flag; what they accept is usable:
// reservations and thresholds parse, rates are finite and positive, and a
// flag.Value written back with String and set again holds the same.
func FuzzFlags(f *testing.F) {
	f.Add(uint8(0), "cpu=100m,memory=256Mi,pid=1000")
	f.Add(uint8(2), "memory.available<100Mi,nodefs.available<10%")
	f.Add(uint8(3), "sandbox=8,containers=0")
	f.Add(uint8(3), "admit=9999999999999999999")
	f.Add(uint8(4), "a=b,,kubernetes.io/x=y")
	f.Add(uint8(11), "NaN")
	f.Add(uint8(11), "+Inf")
	f.Add(uint8(16), "maybe")
	f.Fuzz(func(t *testing.T, which uint8, value string) {
		name := fuzzFlags[int(which)%len(fuzzFlags)]
		var o options
		fs := newFlagSet(&o)
		fs.SetOutput(io.Discard)
		err := fs.Parse([]string{"--" + name + "=" + value})
		if err == nil {
			err = o.validate()
		}
		if err != nil {
			if !strings.Contains(err.Error(), name) {
				t.Fatalf("--%s=%q: error %q does not name the flag", name, value, err)
			}
			return
		}
		if _, err := node.ParseResourceList(o.kubeReserved); err != nil {
			t.Fatalf("--%s=%q validated, but --kube-reserved does not parse: %v", name, value, err)
		}
		if _, err := node.ParseThresholds(o.evictionHard); err != nil {
			t.Fatalf("--%s=%q validated, but --eviction-hard does not parse: %v", name, value, err)
		}
		for _, r := range []float64{o.kubeAPIQPS, o.eventQPS} {
			if math.IsNaN(r) || math.IsInf(r, 0) || r <= 0 {
				t.Fatalf("--%s=%q validated to a rate of %v", name, value, r)
			}
		}
		checkValueRoundTrip(t, name, value, &o)
	})
}

// checkValueRoundTrip sets a flag.Value from its own String and expects
// the same value back.
func checkValueRoundTrip(t *testing.T, name, value string, o *options) {
	t.Helper()
	switch name {
	case "stage-workers":
		back := o.stageWorkers
		if err := back.Set(o.stageWorkers.String()); err != nil || back != o.stageWorkers {
			t.Fatalf("--stage-workers=%q: String %q sets %v (%v)", value, o.stageWorkers.String(), back, err)
		}
	case "cluster-dns", "node-labels", "register-with-taints", "allowed-unsafe-sysctls", "pleg-sources":
		l := map[string]*listFlag{"cluster-dns": &o.clusterDNS, "node-labels": &o.nodeLabels,
			"register-with-taints": &o.registerWithTaints, "allowed-unsafe-sysctls": &o.allowedUnsafeSysctls,
			"pleg-sources": &o.plegSources}[name]
		var back listFlag
		if err := back.Set(l.String()); err != nil || !slices.Equal(back, *l) {
			t.Fatalf("--%s=%q: String %q sets %q (%v), want %q", name, value, l.String(), back, err, *l)
		}
	}
}
