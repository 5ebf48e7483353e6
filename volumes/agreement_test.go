package volumes

import (
	"context"
	"fmt"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/podline/podline/podspec"
)

// A downward API field or resource reads the same in a volume file as in
// an environment variable: both resolve through podspec. The pod leaves
// limits unset (the pod-level limit, then the node's allocatable, fill in;
// hugepages read 0; an allocatable the node does not report reads 0) and
// uses every divisor form.
func TestDownwardVolumeAgreesWithEnv(t *testing.T) {
	node := &podspec.Node{
		Name: "node-1", IPs: []string{"10.0.0.5"}, RootDir: t.TempDir(),
		Allocatable: v1.ResourceList{v1.ResourceCPU: resource.MustParse("3500m"), v1.ResourceMemory: resource.MustParse("7Gi")},
	}
	pod := testPod()
	pod.Spec.Resources = &v1.ResourceRequirements{Limits: v1.ResourceList{v1.ResourceMemory: resource.MustParse("1Gi")}}
	pod.Spec.InitContainers = []v1.Container{{Name: "init", Resources: v1.ResourceRequirements{
		Limits: v1.ResourceList{v1.ResourceCPU: resource.MustParse("250m")},
	}}}
	pod.Spec.Containers[0].Resources = v1.ResourceRequirements{
		Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("100m"), v1.ResourceMemory: resource.MustParse("100Mi")},
		Limits:   v1.ResourceList{v1.ResourceMemory: resource.MustParse("300Mi")},
	}
	fields := []string{
		"metadata.name", "metadata.namespace", "metadata.uid",
		"metadata.labels['app']", "metadata.labels['absent']", "metadata.annotations['note']",
	}
	type res struct{ container, field, divisor string }
	resources := []res{
		{"app", "limits.cpu", ""}, {"app", "limits.cpu", "1m"}, {"app", "requests.cpu", "1m"},
		{"app", "limits.memory", ""}, {"app", "limits.memory", "1Mi"}, {"app", "requests.memory", "1Ki"},
		{"app", "limits.ephemeral-storage", ""}, {"app", "limits.hugepages-2Mi", "1Mi"},
		{"init", "limits.cpu", "1m"}, {"init", "limits.memory", "1M"},
	}
	var items []v1.DownwardAPIVolumeFile
	var env []v1.EnvVar
	for i, f := range fields {
		name := fmt.Sprintf("F%d", i)
		items = append(items, v1.DownwardAPIVolumeFile{Path: name, FieldRef: &v1.ObjectFieldSelector{FieldPath: f}})
		env = append(env, v1.EnvVar{Name: name, ValueFrom: &v1.EnvVarSource{FieldRef: &v1.ObjectFieldSelector{FieldPath: f}}})
	}
	for i, r := range resources {
		name := fmt.Sprintf("R%d", i)
		sel := &v1.ResourceFieldSelector{ContainerName: r.container, Resource: r.field}
		if r.divisor != "" {
			sel.Divisor = resource.MustParse(r.divisor)
		}
		items = append(items, v1.DownwardAPIVolumeFile{Path: name, ResourceFieldRef: sel})
		env = append(env, v1.EnvVar{Name: name, ValueFrom: &v1.EnvVarSource{ResourceFieldRef: sel}})
	}
	pod.Spec.Containers[0].Env = env

	s := New(nil, node.Allocatable)
	dir := volumeDir(t)
	vol := &v1.Volume{Name: "info", VolumeSource: v1.VolumeSource{DownwardAPI: &v1.DownwardAPIVolumeSource{Items: items}}}
	if err := s.SetUp(context.Background(), pod, vol, dir); err != nil {
		t.Fatal(err)
	}
	files := contents(t, dir)
	cfg, err := podspec.ContainerConfig(pod, podspec.Instance{Spec: &pod.Spec.Containers[0]}, "busybox", []string{"10.1.0.9"}, node)
	if err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{}
	for _, kv := range cfg.Envs {
		vars[kv.Key] = string(kv.Value)
	}
	for _, it := range items {
		what := it.Path
		if it.FieldRef != nil {
			what += " " + it.FieldRef.FieldPath
		} else {
			what += fmt.Sprintf(" %s %s /%s", it.ResourceFieldRef.ContainerName, it.ResourceFieldRef.Resource, it.ResourceFieldRef.Divisor.String())
		}
		file, ok := files[it.Path]
		if !ok || file != vars[it.Path] {
			t.Errorf("%s: file %q (written %v), env %q", what, file, ok, vars[it.Path])
		}
	}
	// The fallbacks did happen: the node's allocatable cpu rounded up, no
	// ephemeral-storage allocatable, no hugepages, the pod-level memory
	// limit in decimal megabytes rounded up.
	for path, want := range map[string]string{"R0": "4", "R6": "0", "R7": "0", "R9": "1074"} {
		if files[path] != want {
			t.Errorf("%s = %q, want %q", path, files[path], want)
		}
	}
}
