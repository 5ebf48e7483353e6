package podspec

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// resourceFieldNames are the resources a resourceFieldRef may name besides
// hugepages-<size>; they are also the ones a container may leave without a
// limit and still be bounded.
var resourceFieldNames = []v1.ResourceName{v1.ResourceCPU, v1.ResourceMemory, v1.ResourceEphemeralStorage}

// The divisors the API server accepts: a value is a whole number of them.
var (
	cpuDivisors  = quantities("1m", "1")
	byteDivisors = quantities("1", "1k", "1M", "1G", "1T", "1P", "1E", "1Ki", "1Mi", "1Gi", "1Ti", "1Pi", "1Ei")
)

// ResourceFields lists what a resourceFieldRef may name: what an error
// offers instead.
func ResourceFields() []string {
	var out []string
	for _, kind := range []string{"limits", "requests"} {
		for _, name := range []string{"cpu", "ephemeral-storage", v1.ResourceHugePagesPrefix + "<size>", "memory"} {
			out = append(out, kind+"."+name)
		}
	}
	return out
}

// CheckResourceField reports ErrUnsupported for a resource podline does
// not resolve.
func CheckResourceField(field string) error {
	_, _, err := parseResourceField(field)
	return err
}

// CheckDivisor reports a divisor the API server would refuse for field,
// in words that leave the divisor out for the caller to name. A zero
// divisor means 1. A field CheckResourceField refuses has no divisor to
// check.
func CheckDivisor(field string, divisor resource.Quantity) error {
	_, name, err := parseResourceField(field)
	if err != nil {
		return nil
	}
	return checkDivisor(name, divisor)
}

// ResourceFieldValue resolves ref for container c of pod; the caller picks
// c by ref.ContainerName. A request left unset reads as 0. A limit left
// unset reads as what bounds the container instead: the pod-level limit,
// then the node's allocatable (0 when unknown). Hugepages are never
// overcommitted, so a container without a hugepages limit has none. The
// value is rounded up to a whole number of divisors: a container never
// reads fewer cores or bytes than it has.
func ResourceFieldValue(pod *v1.Pod, c *v1.Container, ref *v1.ResourceFieldSelector, allocatable v1.ResourceList) (string, error) {
	limit, name, err := parseResourceField(ref.Resource)
	if err != nil {
		return "", err
	}
	if err := checkDivisor(name, ref.Divisor); err != nil {
		return "", fmt.Errorf("resourceFieldRef %q: divisor %s %w", ref.Resource, ref.Divisor.String(), err)
	}
	q := c.Resources.Requests[name]
	if limit {
		q = limitOf(pod, c, name, allocatable)
	}
	divisor := ref.Divisor
	if divisor.IsZero() {
		divisor = *resource.NewQuantity(1, resource.DecimalSI)
	}
	if name == v1.ResourceCPU {
		return strconv.FormatInt(ceilDiv(q.MilliValue(), divisor.MilliValue()), 10), nil
	}
	return strconv.FormatInt(ceilDiv(q.Value(), divisor.Value()), 10), nil
}

// NamedResourceFieldValue resolves ref for the container it names, as a
// downwardAPI volume item reads it: a volume belongs to no container, so
// the name is required, as the API server requires it there.
func NamedResourceFieldValue(pod *v1.Pod, ref *v1.ResourceFieldSelector, allocatable v1.ResourceList) (string, error) {
	if ref.ContainerName == "" {
		return "", fmt.Errorf("resourceFieldRef %q names no container", ref.Resource)
	}
	c := findContainer(pod, ref.ContainerName)
	if c == nil {
		return "", fmt.Errorf("resourceFieldRef %q: no container %q in the pod", ref.Resource, ref.ContainerName)
	}
	return ResourceFieldValue(pod, c, ref, allocatable)
}

func limitOf(pod *v1.Pod, c *v1.Container, name v1.ResourceName, allocatable v1.ResourceList) resource.Quantity {
	if q, ok := c.Resources.Limits[name]; ok || isHugePages(name) {
		return q
	}
	if r := pod.Spec.Resources; r != nil {
		if q, ok := r.Limits[name]; ok {
			return q
		}
	}
	return allocatable[name]
}

// parseResourceField splits "limits.cpu".
func parseResourceField(field string) (limit bool, name v1.ResourceName, err error) {
	kind, n, _ := strings.Cut(field, ".")
	name = v1.ResourceName(n)
	if (kind != "limits" && kind != "requests") || !(slices.Contains(resourceFieldNames, name) || isHugePages(name)) {
		return false, "", fmt.Errorf("%w resourceFieldRef %q", ErrUnsupported, field)
	}
	return kind == "limits", name, nil
}

func checkDivisor(name v1.ResourceName, divisor resource.Quantity) error {
	if divisor.IsZero() {
		return nil
	}
	valid := byteDivisors
	if name == v1.ResourceCPU {
		valid = cpuDivisors
	}
	for _, d := range valid {
		if divisor.Cmp(d) == 0 {
			return nil
		}
	}
	return fmt.Errorf("must be one of %s for %s", quantityList(valid), name)
}

func isHugePages(name v1.ResourceName) bool {
	return len(name) > len(v1.ResourceHugePagesPrefix) && strings.HasPrefix(string(name), v1.ResourceHugePagesPrefix)
}

func ceilDiv(a, b int64) int64 {
	return (a + b - 1) / b
}

func quantities(s ...string) []resource.Quantity {
	out := make([]resource.Quantity, len(s))
	for i := range s {
		out[i] = resource.MustParse(s[i])
	}
	return out
}

func quantityList(qs []resource.Quantity) string {
	s := make([]string, len(qs))
	for i := range qs {
		s[i] = qs[i].String()
	}
	return strings.Join(s, ", ")
}
