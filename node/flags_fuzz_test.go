package node

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
)

// FuzzParseResourceList parses any --kube-reserved / --system-reserved
// value. A refusal quotes the item or names the resource; a list holds
// only the four reservable resources, none negative, and written back as
// a flag it parses to the same amounts.
func FuzzParseResourceList(f *testing.F) {
	f.Add("cpu=100m,memory=256Mi,ephemeral-storage=1Gi,pid=1000")
	f.Add(" cpu = 1 ,memory=1e3")
	f.Add("cpu=-1")
	f.Add("memory=1e1000000,cpu=0.0000000001")
	f.Add("pods=10")
	f.Add("cpu=1,cpu=2,,")
	f.Fuzz(func(t *testing.T, s string) {
		rl, err := ParseResourceList(s)
		if err != nil {
			if !namesAnItem(err.Error(), s, "cpu", "memory", "ephemeral-storage", "pid") {
				t.Fatalf("ParseResourceList(%q): %q quotes no item and names no resource", s, err)
			}
			return
		}
		var parts []string
		for name, q := range rl {
			switch name {
			case v1.ResourceCPU, v1.ResourceMemory, v1.ResourceEphemeralStorage, ResourcePID:
			default:
				t.Fatalf("ParseResourceList(%q): resource %q", s, name)
			}
			if q.Sign() < 0 {
				t.Fatalf("ParseResourceList(%q): %s=%s is negative", s, name, q.String())
			}
			parts = append(parts, string(name)+"="+q.String())
		}
		back := strings.Join(parts, ",")
		again, err := ParseResourceList(back)
		if err != nil {
			t.Fatalf("ParseResourceList(%q) written back as %q does not parse: %v", s, back, err)
		}
		if len(again) != len(rl) {
			t.Fatalf("ParseResourceList(%q): %d resources, then %d from %q", s, len(rl), len(again), back)
		}
		for name, q := range rl {
			if q2 := again[name]; q.Cmp(q2) != 0 {
				t.Fatalf("ParseResourceList(%q): %s=%s, then %s from %q", s, name, q.String(), q2.String(), back)
			}
		}
	})
}

// FuzzParseThresholds parses any --eviction-hard value. A refusal quotes
// the expression; a threshold has a known signal and either a quantity
// that is not negative or a percentage in [0, 1]; written back as a flag
// it parses to the same thresholds; and the allocatable it gives is never
// more than capacity.
func FuzzParseThresholds(f *testing.F) {
	f.Add(DefaultEvictionHard)
	f.Add("memory.available<-1Gi")
	f.Add("nodefs.available<NaN%")
	f.Add("nodefs.available<10abc%")
	f.Add("memory.available<=1Gi")
	f.Add("imagefs.available<1e-3%,pid.available<1e3")
	f.Fuzz(func(t *testing.T, s string) {
		ts, err := ParseThresholds(s)
		if err != nil {
			if !namesAnItem(err.Error(), s) {
				t.Fatalf("ParseThresholds(%q): %q quotes no expression", s, err)
			}
			return
		}
		var parts []string
		for _, th := range ts {
			if !knownSignals[th.Signal] {
				t.Fatalf("ParseThresholds(%q): signal %q", s, th.Signal)
			}
			if th.Quantity != nil {
				if th.Quantity.Sign() < 0 {
					t.Fatalf("ParseThresholds(%q): %s<%s is negative", s, th.Signal, th.Quantity.String())
				}
				parts = append(parts, th.Signal+"<"+th.Quantity.String())
				continue
			}
			if math.IsNaN(th.Percentage) || th.Percentage < 0 || th.Percentage > 1 {
				t.Fatalf("ParseThresholds(%q): %s at %v of capacity", s, th.Signal, th.Percentage)
			}
			parts = append(parts, th.Signal+"<"+strconv.FormatFloat(th.Percentage*100, 'g', -1, 64)+"%")
		}
		back := strings.Join(parts, ",")
		again, err := ParseThresholds(back)
		if err != nil {
			t.Fatalf("ParseThresholds(%q) written back as %q does not parse: %v", s, back, err)
		}
		if !slices.EqualFunc(ts, again, sameThreshold) {
			t.Fatalf("ParseThresholds(%q) = %v, then %v from %q", s, ts, again, back)
		}
		capacity := Capacity(4, 8<<30, 100<<30, 110)
		for name, a := range Allocatable(capacity, nil, nil, ts) {
			if c := capacity[name]; a.Cmp(c) > 0 || a.Sign() < 0 {
				t.Fatalf("ParseThresholds(%q): allocatable %s %s outside [0, capacity %s]", s, name, a.String(), c.String())
			}
		}
	})
}

func sameThreshold(a, b Threshold) bool {
	if a.Signal != b.Signal || (a.Quantity == nil) != (b.Quantity == nil) {
		return false
	}
	if a.Quantity != nil {
		return a.Quantity.Cmp(*b.Quantity) == 0
	}
	// A percentage goes through *100 and /100: allow the last bit.
	return math.Abs(a.Percentage-b.Percentage) <= 1e-15
}

// namesAnItem says whether msg quotes one comma-separated item of flag
// (as %q would) or names one of the resources.
func namesAnItem(msg, flag string, names ...string) bool {
	for _, item := range strings.Split(flag, ",") {
		for _, form := range []string{strconv.Quote(item), strconv.Quote(strings.TrimSpace(item))} {
			if strings.Contains(msg, form) {
				return true
			}
		}
	}
	for _, item := range strings.Split(flag, ",") {
		key, _, _ := strings.Cut(item, "=")
		if strings.Contains(msg, strconv.Quote(strings.TrimSpace(key))) {
			return true
		}
	}
	for _, n := range names {
		if strings.HasPrefix(msg, n+":") || strings.Contains(msg, strconv.Quote(n)) {
			return true
		}
	}
	return false
}
