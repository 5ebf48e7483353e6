package volumes

import (
	"context"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func TestDownwardFieldValue(t *testing.T) {
	pod := testPod()
	f := func(path, want string) {
		t.Helper()
		it := &v1.DownwardAPIVolumeFile{Path: "f", FieldRef: &v1.ObjectFieldSelector{FieldPath: path}}
		got, err := downwardValue(pod, it, nil)
		if err != nil || got != want {
			t.Fatalf("%s = %q, %v; want %q", path, got, err, want)
		}
	}
	f("metadata.name", "web-1")
	f("metadata.namespace", "shop")
	f("metadata.uid", "0b4c2d1e-uid")
	f("metadata.labels", "app=\"web\"\ntier=\"front\"")
	f("metadata.annotations", `note="say \"hi\"\n"`)
	f("metadata.labels['tier']", "front")
	f("metadata.annotations['note']", "say \"hi\"\n")
	f("metadata.labels['absent']", "")

	bad := func(path string, class error) {
		t.Helper()
		it := &v1.DownwardAPIVolumeFile{Path: "f", FieldRef: &v1.ObjectFieldSelector{FieldPath: path}}
		_, err := downwardValue(pod, it, nil)
		wantErr(t, err, class, "")
	}
	// The API server allows these in environment variables only.
	bad("status.podIP", ErrUnsupported)
	bad("spec.nodeName", ErrUnsupported)
	bad("metadata.labels[tier]", ErrUnsupported)
	bad("metadata.labels['a b']", ErrInvalid)
}

func TestDownwardResourceValue(t *testing.T) {
	pod := testPod()
	pod.Spec.Containers[0].Resources = v1.ResourceRequirements{
		Limits:   v1.ResourceList{v1.ResourceCPU: resource.MustParse("1500m"), v1.ResourceMemory: resource.MustParse("256Mi")},
		Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("250m")},
	}
	pod.Spec.InitContainers = []v1.Container{{Name: "init"}}
	allocatable := v1.ResourceList{
		v1.ResourceCPU:              resource.MustParse("4"),
		v1.ResourceMemory:           resource.MustParse("8Gi"),
		v1.ResourceEphemeralStorage: resource.MustParse("10G"),
	}
	value := func(alloc v1.ResourceList, container, res, divisor string) (string, error) {
		ref := &v1.ResourceFieldSelector{ContainerName: container, Resource: res}
		if divisor != "" {
			ref.Divisor = resource.MustParse(divisor)
		}
		return downwardValue(pod, &v1.DownwardAPIVolumeFile{Path: "f", ResourceFieldRef: ref}, alloc)
	}
	f := func(container, res, divisor, want string) {
		t.Helper()
		if got, err := value(allocatable, container, res, divisor); err != nil || got != want {
			t.Fatalf("%s %s /%s = %q, %v; want %q", container, res, divisor, got, err, want)
		}
	}
	f("app", "limits.cpu", "", "2") // 1.5 cores rounds up
	f("app", "limits.cpu", "1m", "1500")
	f("app", "requests.cpu", "1m", "250")
	f("app", "requests.cpu", "", "1")
	f("app", "limits.memory", "", "268435456")
	f("app", "limits.memory", "1Mi", "256")
	f("app", "requests.memory", "", "0")
	// Unset limits read as the node's allocatable, for init containers too.
	f("app", "limits.ephemeral-storage", "1G", "10")
	f("init", "limits.cpu", "", "4")
	f("init", "limits.memory", "1Gi", "8")
	// Hugepages are never overcommitted: no limit is none, not the node's.
	f("app", "limits.hugepages-2Mi", "", "0")

	// A pod-level limit comes before the node's allocatable.
	pod.Spec.Resources = &v1.ResourceRequirements{Limits: v1.ResourceList{v1.ResourceMemory: resource.MustParse("1Gi")}}
	f("init", "limits.memory", "1Mi", "1024")
	// An allocatable podline does not know reads 0, as in environments.
	if got, err := value(nil, "init", "limits.cpu", ""); err != nil || got != "0" {
		t.Fatalf("unknown allocatable: %q, %v; want 0", got, err)
	}

	bad := func(container, res, divisor string, class error, mention string) {
		t.Helper()
		_, err := value(allocatable, container, res, divisor)
		wantErr(t, err, class, mention)
	}
	bad("sidecar", "limits.cpu", "", ErrInvalid, `no container "sidecar"`)
	bad("", "limits.cpu", "", ErrInvalid, "names no container")
	bad("app", "limits.gpu", "", ErrUnsupported, "limits.gpu")
	bad("app", "cpu", "", ErrUnsupported, "cpu")
	bad("app", "limits.memory", "3", ErrInvalid, "divisor")
	bad("app", "limits.cpu", "1Mi", ErrInvalid, "divisor")
}

// Without an API server (a standalone node) a downwardAPI volume is
// written all the same, from the pod alone.
func TestDownwardAPIVolume(t *testing.T) {
	pod := testPod()
	pod.Spec.Containers[0].Resources.Limits = v1.ResourceList{v1.ResourceMemory: resource.MustParse("64Mi")}
	s := New(nil, v1.ResourceList{v1.ResourceCPU: resource.MustParse("3")})
	dir := volumeDir(t)
	vol := &v1.Volume{Name: "podinfo", VolumeSource: v1.VolumeSource{DownwardAPI: &v1.DownwardAPIVolumeSource{
		DefaultMode: ptr[int32](0o444),
		Items: []v1.DownwardAPIVolumeFile{
			{Path: "name", FieldRef: &v1.ObjectFieldSelector{FieldPath: "metadata.name"}},
			{Path: "meta/labels", FieldRef: &v1.ObjectFieldSelector{FieldPath: "metadata.labels"}, Mode: ptr[int32](0o400)},
			{Path: "mem_mi", ResourceFieldRef: &v1.ResourceFieldSelector{ContainerName: "app", Resource: "limits.memory", Divisor: resource.MustParse("1Mi")}},
			{Path: "cpu", ResourceFieldRef: &v1.ResourceFieldSelector{ContainerName: "app", Resource: "limits.cpu"}},
		},
	}}}
	if err := s.SetUp(context.Background(), pod, vol, dir); err != nil {
		t.Fatal(err)
	}
	got := readVolume(t, dir)
	want := map[string]file{
		"name":        {data: []byte("web-1"), mode: 0o444},
		"meta/labels": {data: []byte("app=\"web\"\ntier=\"front\""), mode: 0o400},
		"mem_mi":      {data: []byte("64"), mode: 0o444},
		"cpu":         {data: []byte("3"), mode: 0o444}, // no limit: the node's allocatable
	}
	if len(got) != len(want) {
		t.Fatalf("volume holds %v", got)
	}
	for p, w := range want {
		if g := got[p]; string(g.data) != string(w.data) || g.mode != w.mode {
			t.Fatalf("%s: got %q %o, want %q %o", p, g.data, g.mode, w.data, w.mode)
		}
	}
	if onTmpfs(t, dir) {
		t.Fatal("a downwardAPI volume got a tmpfs; only secrets and projected volumes do")
	}

	// What needs the API server says so.
	cfg := &v1.Volume{Name: "cfg", VolumeSource: v1.VolumeSource{ConfigMap: &v1.ConfigMapVolumeSource{LocalObjectReference: v1.LocalObjectReference{Name: "c"}}}}
	wantErr(t, s.SetUp(context.Background(), pod, cfg, volumeDir(t)), ErrNoAPIServer, `configMap "c"`)
}

// A relabelled pod is stale until its downward API volume is written with
// the new labels; a change to what no item reads is not a change.
func TestDownwardAPIVolumeFollowsThePod(t *testing.T) {
	ctx := context.Background()
	pod := testPod()
	s := New(nil, nil)
	dir := volumeDir(t)
	vol := v1.Volume{Name: "podinfo", VolumeSource: v1.VolumeSource{DownwardAPI: &v1.DownwardAPIVolumeSource{
		Items: []v1.DownwardAPIVolumeFile{
			{Path: "labels", FieldRef: &v1.ObjectFieldSelector{FieldPath: "metadata.labels"}},
		},
	}}}
	pod.Spec.Volumes = []v1.Volume{vol}
	if err := s.SetUp(ctx, pod, &vol, dir); err != nil {
		t.Fatal(err)
	}
	if _, stale := s.Stale(pod); stale {
		t.Fatal("stale right after setup")
	}
	relabelled := pod.DeepCopy()
	relabelled.Labels["tier"] = "back"
	mark, stale := s.Stale(relabelled)
	if !stale {
		t.Fatal("a label change did not make the volume stale")
	}
	if err := s.SetUp(ctx, relabelled, &vol, dir); err != nil {
		t.Fatal(err)
	}
	s.Refreshed(relabelled.UID, mark)
	if got := contents(t, dir)["labels"]; got != "app=\"web\"\ntier=\"back\"" {
		t.Fatalf("labels after relabel: %q", got)
	}
	annotated := relabelled.DeepCopy()
	annotated.Annotations["other"] = "x"
	if _, stale := s.Stale(annotated); stale {
		t.Fatal("an annotation no item reads made the volume stale")
	}
	s.Release(pod.UID)
	if _, stale := s.Stale(relabelled); stale {
		t.Fatal("a released pod is stale")
	}
}
