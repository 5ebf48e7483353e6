package podspec

import (
	"errors"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func resourceList(kv ...string) v1.ResourceList {
	rl := v1.ResourceList{}
	for i := 0; i < len(kv); i += 2 {
		rl[v1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return rl
}

func ref(field, divisor string) *v1.ResourceFieldSelector {
	r := &v1.ResourceFieldSelector{Resource: field}
	if divisor != "" {
		r.Divisor = resource.MustParse(divisor)
	}
	return r
}

var nodeAllocatable = resourceList("cpu", "4", "memory", "8Gi", "ephemeral-storage", "100Gi")

func TestResourceFieldValue(t *testing.T) {
	c := &v1.Container{Name: "app", Resources: v1.ResourceRequirements{
		Requests: resourceList("cpu", "250m", "memory", "64Mi", "hugepages-2Mi", "4Mi"),
		Limits:   resourceList("cpu", "1500m", "memory", "1Gi", "hugepages-2Mi", "4Mi"),
	}}
	bare := &v1.Container{Name: "bare"}
	pod := &v1.Pod{}
	podLevel := &v1.Pod{Spec: v1.PodSpec{Resources: &v1.ResourceRequirements{Limits: resourceList("cpu", "2", "memory", "2Gi")}}}
	f := func(name string, pod *v1.Pod, c *v1.Container, r *v1.ResourceFieldSelector, allocatable v1.ResourceList, want string) {
		t.Helper()
		if err := CheckResourceField(r.Resource); err != nil {
			t.Errorf("%s: check: %v", name, err)
		}
		if err := CheckDivisor(r.Resource, r.Divisor); err != nil {
			t.Errorf("%s: check divisor: %v", name, err)
		}
		got, err := ResourceFieldValue(pod, c, r, allocatable)
		if err != nil || got != want {
			t.Errorf("%s: %q, %v; want %q", name, got, err, want)
		}
	}
	f("cpu limit rounds up to whole cores", pod, c, ref("limits.cpu", ""), nodeAllocatable, "2")
	f("cpu limit in millicores", pod, c, ref("limits.cpu", "1m"), nodeAllocatable, "1500")
	f("cpu request rounds up", pod, c, ref("requests.cpu", ""), nodeAllocatable, "1")
	f("memory limit in bytes", pod, c, ref("limits.memory", ""), nodeAllocatable, "1073741824")
	f("memory limit in Mi", pod, c, ref("limits.memory", "1Mi"), nodeAllocatable, "1024")
	f("memory request in decimal G rounds up", pod, c, ref("requests.memory", "1G"), nodeAllocatable, "1")
	f("hugepages limit", pod, c, ref("limits.hugepages-2Mi", "1Mi"), nodeAllocatable, "4")
	f("hugepages request", pod, c, ref("requests.hugepages-2Mi", "1Mi"), nodeAllocatable, "4")
	f("unset request reads 0", pod, bare, ref("requests.memory", ""), nodeAllocatable, "0")
	f("unset cpu request reads 0", pod, bare, ref("requests.cpu", "1m"), nodeAllocatable, "0")
	f("unset limit reads the node's allocatable", pod, bare, ref("limits.cpu", "1m"), nodeAllocatable, "4000")
	f("unset memory limit reads the node's allocatable", pod, bare, ref("limits.memory", "1Mi"), nodeAllocatable, "8192")
	f("unset ephemeral-storage limit too", pod, bare, ref("limits.ephemeral-storage", "1Gi"), nodeAllocatable, "100")
	f("unset limit reads the pod-level limit first", podLevel, bare, ref("limits.cpu", "1m"), nodeAllocatable, "2000")
	f("pod-level memory limit", podLevel, bare, ref("limits.memory", "1Mi"), nodeAllocatable, "2048")
	f("pod-level without that resource: the node's", podLevel, bare, ref("limits.ephemeral-storage", "1Gi"), nodeAllocatable, "100")
	f("the container's own limit wins over the pod's", podLevel, c, ref("limits.cpu", "1m"), nodeAllocatable, "1500")
	f("hugepages are never overcommitted: no limit, none", podLevel, bare, ref("limits.hugepages-2Mi", ""), nodeAllocatable, "0")
	f("unknown allocatable reads 0", pod, bare, ref("limits.memory", ""), nil, "0")
}

func TestResourceFieldRefused(t *testing.T) {
	f := func(r *v1.ResourceFieldSelector, unsupported bool, msg string) {
		t.Helper()
		checkErr := CheckResourceField(r.Resource)
		if checkErr == nil {
			checkErr = CheckDivisor(r.Resource, r.Divisor)
		}
		_, err := ResourceFieldValue(&v1.Pod{}, &v1.Container{}, r, nodeAllocatable)
		if err == nil || checkErr == nil || !strings.Contains(err.Error(), checkErr.Error()) {
			t.Fatalf("%s / %s: check %v, value %v; want the check's error in the value's", r.Resource, r.Divisor.String(), checkErr, err)
		}
		if errors.Is(err, ErrUnsupported) != unsupported || !strings.Contains(err.Error(), msg) {
			t.Errorf("%s: %v; want unsupported=%v mentioning %q", r.Resource, err, unsupported, msg)
		}
	}
	f(ref("limits.nvidia.com/gpu", ""), true, `unsupported resourceFieldRef "limits.nvidia.com/gpu"`)
	f(ref("requests.nvidia.com/gpu", ""), true, "")
	f(ref("cpu", ""), true, "")
	f(ref("limits.", ""), true, "")
	f(ref("limits.hugepages-", ""), true, "")
	f(ref("usage.cpu", ""), true, "")
	f(ref("limits.cpu", "100m"), false, `resourceFieldRef "limits.cpu": divisor 100m must be one of 1m, 1 for cpu`)
	f(ref("limits.memory", "2"), false, "divisor 2 must be one of 1, 1k, 1M, 1G, 1T, 1P, 1E, 1Ki, 1Mi, 1Gi, 1Ti, 1Pi, 1Ei for memory")
	f(ref("requests.hugepages-1Gi", "1m"), false, "divisor 1m must be one of 1, 1k")
	f(ref("limits.memory", "-1"), false, "divisor -1 must")
}

func TestResourceFields(t *testing.T) {
	want := "limits.cpu limits.ephemeral-storage limits.hugepages-<size> limits.memory " +
		"requests.cpu requests.ephemeral-storage requests.hugepages-<size> requests.memory"
	got := ResourceFields()
	if strings.Join(got, " ") != want {
		t.Errorf("got %s\nwant %s", strings.Join(got, " "), want)
	}
	for _, field := range got {
		field = strings.ReplaceAll(field, "<size>", "2Mi")
		if _, err := ResourceFieldValue(&v1.Pod{}, &v1.Container{}, ref(field, ""), nodeAllocatable); err != nil {
			t.Errorf("listed %s does not resolve: %v", field, err)
		}
	}
}

// A volume item names its container: an init container's resources are
// read too, and a missing or unknown name is an error, not this pod's
// first container.
func TestNamedResourceFieldValue(t *testing.T) {
	pod := &v1.Pod{Spec: v1.PodSpec{
		InitContainers: []v1.Container{{Name: "init", Resources: v1.ResourceRequirements{Limits: resourceList("memory", "32Mi")}}},
		Containers:     []v1.Container{{Name: "app"}},
	}}
	f := func(container, field, want, wantErr string) {
		t.Helper()
		r := ref(field, "1Mi")
		r.ContainerName = container
		got, err := NamedResourceFieldValue(pod, r, nodeAllocatable)
		switch {
		case wantErr != "" && (err == nil || !strings.Contains(err.Error(), wantErr)):
			t.Errorf("%s %s: %q, %v; want an error containing %q", container, field, got, err, wantErr)
		case wantErr == "" && (err != nil || got != want):
			t.Errorf("%s %s: %q, %v; want %q", container, field, got, err, want)
		}
	}
	f("init", "limits.memory", "32", "")
	f("app", "limits.memory", "8192", "") // unset: the node's allocatable
	f("", "limits.memory", "", "names no container")
	f("sidecar", "limits.memory", "", `no container "sidecar"`)
}
