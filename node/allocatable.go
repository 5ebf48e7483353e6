package node

import (
	"fmt"
	"strconv"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// ResourcePID is the reservable process-id resource of --kube-reserved.
const ResourcePID v1.ResourceName = "pid"

// ParseResourceList reads a --kube-reserved / --system-reserved value:
// "cpu=100m,memory=100Mi,ephemeral-storage=1Gi,pid=1000". Spaces around
// names and quantities are dropped, as the kubelet's flag drops them.
func ParseResourceList(s string) (v1.ResourceList, error) {
	out := v1.ResourceList{}
	if strings.TrimSpace(s) == "" {
		return out, nil
	}
	for _, kv := range strings.Split(s, ",") {
		name, val, ok := strings.Cut(kv, "=")
		if !ok {
			return nil, fmt.Errorf("%q: want name=quantity", kv)
		}
		name, val = strings.TrimSpace(name), strings.TrimSpace(val)
		switch rn := v1.ResourceName(name); rn {
		case v1.ResourceCPU, v1.ResourceMemory, v1.ResourceEphemeralStorage, ResourcePID:
			q, err := parseBounded(val)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
			if q.Sign() < 0 {
				return nil, fmt.Errorf("%s: %s is negative", name, val)
			}
			out[rn] = q
		default:
			return nil, fmt.Errorf("%q: unknown resource (want cpu, memory, ephemeral-storage or pid)", name)
		}
	}
	return out, nil
}

// maxQuantityExponent bounds the decimal exponent of a flag's quantity:
// int64 holds 9.2e18. Past it a quantity is an arbitrary-precision number,
// and arithmetic with 1e66600000 ran for half a minute (Cmp, Sub).
const maxQuantityExponent = 18

// parseBounded parses a quantity in the range the node's resources live
// in, refusing an exponent past maxQuantityExponent. The quantity is
// rewritten in its canonical form first, which is cheap and turns
// 0e66600000 into 0.
func parseBounded(val string) (resource.Quantity, error) {
	q, err := resource.ParseQuantity(val)
	if err != nil {
		return q, err
	}
	canonical := q.String()
	if q, err = resource.ParseQuantity(canonical); err != nil {
		return q, err
	}
	digits := strings.TrimLeft(canonical, "+-0123456789.")
	if exp, ok := strings.CutPrefix(strings.ToLower(digits), "e"); ok {
		if n, err := strconv.Atoi(exp); err != nil || n > maxQuantityExponent {
			return q, fmt.Errorf("%s is out of range (at most 9e18)", val)
		}
	}
	if len(canonical) > 24 {
		return q, fmt.Errorf("%s is out of range (at most 9e18)", val)
	}
	return q, nil
}

// Threshold is one hard eviction threshold, "memory.available<100Mi" or
// "nodefs.available<10%".
type Threshold struct {
	Signal string
	// Either an absolute quantity or a percentage of capacity.
	Quantity   *resource.Quantity
	Percentage float64
}

// DefaultEvictionHard is the kubelet's Linux default.
const DefaultEvictionHard = "memory.available<100Mi,nodefs.available<10%,imagefs.available<15%,nodefs.inodesFree<5%"

var knownSignals = map[string]bool{
	"memory.available": true, "nodefs.available": true, "nodefs.inodesFree": true,
	"imagefs.available": true, "imagefs.inodesFree": true, "pid.available": true,
}

// ParseThresholds reads --eviction-hard.
func ParseThresholds(s string) ([]Threshold, error) {
	var out []Threshold
	if strings.TrimSpace(s) == "" {
		return out, nil
	}
	for _, expr := range strings.Split(s, ",") {
		signal, val, ok := strings.Cut(strings.TrimSpace(expr), "<")
		if !ok {
			return nil, fmt.Errorf("%q: want signal<quantity (only < is supported)", expr)
		}
		if !knownSignals[signal] {
			return nil, fmt.Errorf("%q: unknown eviction signal %q", expr, signal)
		}
		t := Threshold{Signal: signal}
		if pct, ok := strings.CutSuffix(val, "%"); ok {
			// ParseFloat takes the whole string ("10abc" is refused);
			// the range check refuses NaN too.
			p, err := strconv.ParseFloat(pct, 64)
			if err != nil || !(p >= 0 && p <= 100) {
				return nil, fmt.Errorf("%q: percentage %q: want a number from 0 to 100", expr, pct)
			}
			t.Percentage = p / 100
		} else {
			q, err := parseBounded(val)
			if err != nil {
				return nil, fmt.Errorf("%q: %w", expr, err)
			}
			if q.Sign() < 0 {
				// It would add to allocatable what it should take off.
				return nil, fmt.Errorf("%q: %s is negative", expr, val)
			}
			t.Quantity = &q
		}
		out = append(out, t)
	}
	return out, nil
}

// amount is the threshold in absolute terms against a capacity.
func (t Threshold) amount(capacity resource.Quantity) int64 {
	if t.Quantity != nil {
		return t.Quantity.Value()
	}
	return int64(float64(capacity.Value()) * t.Percentage)
}

// Capacity is the node's capacity: cores, memory, pods, and the size of
// the filesystem that holds --root-dir.
func Capacity(cores int, memoryBytes, rootFsBytes int64, maxPods int) v1.ResourceList {
	return v1.ResourceList{
		v1.ResourceCPU:              *resource.NewMilliQuantity(int64(cores)*1000, resource.DecimalSI),
		v1.ResourceMemory:           *resource.NewQuantity(memoryBytes, resource.BinarySI),
		v1.ResourcePods:             *resource.NewQuantity(int64(maxPods), resource.DecimalSI),
		v1.ResourceEphemeralStorage: *resource.NewQuantity(rootFsBytes, resource.BinarySI),
	}
}

// Allocatable is capacity less the reservations and, for memory and
// ephemeral storage, the hard eviction threshold: what pods may request.
// Nothing goes below zero.
func Allocatable(capacity, kubeReserved, systemReserved v1.ResourceList, evictionHard []Threshold) v1.ResourceList {
	out := v1.ResourceList{}
	for name, c := range capacity {
		a := c.DeepCopy()
		for _, reserved := range []v1.ResourceList{kubeReserved, systemReserved} {
			if r, ok := reserved[name]; ok {
				a.Sub(r)
			}
		}
		for _, t := range evictionHard {
			if (name == v1.ResourceMemory && t.Signal == "memory.available") ||
				(name == v1.ResourceEphemeralStorage && t.Signal == "nodefs.available") {
				a.Sub(*resource.NewQuantity(t.amount(c), a.Format))
			}
		}
		if a.Sign() < 0 {
			a = *resource.NewQuantity(0, a.Format)
		}
		out[name] = a
	}
	return out
}
