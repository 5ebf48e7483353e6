package volumes

import (
	"context"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/client-go/kubernetes/fake"
)

func TestFieldValue(t *testing.T) {
	pod := testPod()
	f := func(path, want string) {
		t.Helper()
		got, err := fieldValue(pod, path)
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

	for _, bad := range []string{"status.podIP", "metadata.labels[tier]", "metadata.labels['']", "spec.nodeName"} {
		if _, err := fieldValue(pod, bad); err == nil {
			t.Fatalf("%s: no error", bad)
		}
	}
}

func TestResourceValue(t *testing.T) {
	pod := testPod()
	pod.Spec.Containers[0].Resources = v1.ResourceRequirements{
		Limits:   v1.ResourceList{v1.ResourceCPU: resource.MustParse("1500m"), v1.ResourceMemory: resource.MustParse("256Mi")},
		Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("250m")},
	}
	pod.Spec.InitContainers = []v1.Container{{Name: "init"}}
	s := New(fake.NewClientset(), v1.ResourceList{
		v1.ResourceCPU:              resource.MustParse("4"),
		v1.ResourceMemory:           resource.MustParse("8Gi"),
		v1.ResourceEphemeralStorage: resource.MustParse("10G"),
	})
	f := func(container, res, divisor, want string) {
		t.Helper()
		ref := &v1.ResourceFieldSelector{ContainerName: container, Resource: res}
		if divisor != "" {
			ref.Divisor = resource.MustParse(divisor)
		}
		got, err := s.resourceValue(pod, ref)
		if err != nil || got != want {
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

	// A pod-level limit comes before the node's allocatable.
	pod.Spec.Resources = &v1.ResourceRequirements{Limits: v1.ResourceList{v1.ResourceMemory: resource.MustParse("1Gi")}}
	f("init", "limits.memory", "1Mi", "1024")

	bad := func(container, res string, class error) {
		t.Helper()
		_, err := s.resourceValue(pod, &v1.ResourceFieldSelector{ContainerName: container, Resource: res})
		wantErr(t, err, class, "")
	}
	bad("sidecar", "limits.cpu", ErrInvalid)
	bad("app", "limits.gpu", ErrUnsupported)
	bad("app", "cpu", ErrUnsupported)
	noNode := New(fake.NewClientset(), nil)
	if _, err := noNode.resourceValue(pod, &v1.ResourceFieldSelector{ContainerName: "init", Resource: "limits.cpu"}); err == nil {
		t.Fatal("an unset limit with no node allocatable gave no error")
	}
}

func TestDownwardAPIVolume(t *testing.T) {
	pod := testPod()
	pod.Spec.Containers[0].Resources.Limits = v1.ResourceList{v1.ResourceMemory: resource.MustParse("64Mi")}
	s := New(fake.NewClientset(), nil)
	dir := volumeDir(t)
	vol := &v1.Volume{Name: "podinfo", VolumeSource: v1.VolumeSource{DownwardAPI: &v1.DownwardAPIVolumeSource{
		DefaultMode: ptr[int32](0o444),
		Items: []v1.DownwardAPIVolumeFile{
			{Path: "name", FieldRef: &v1.ObjectFieldSelector{FieldPath: "metadata.name"}},
			{Path: "meta/labels", FieldRef: &v1.ObjectFieldSelector{FieldPath: "metadata.labels"}, Mode: ptr[int32](0o400)},
			{Path: "mem_mi", ResourceFieldRef: &v1.ResourceFieldSelector{ContainerName: "app", Resource: "limits.memory", Divisor: resource.MustParse("1Mi")}},
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

	// Relabelling the pod changes the file on the next setup.
	pod.Labels["tier"] = "back"
	if err := s.SetUp(context.Background(), pod, vol, dir); err != nil {
		t.Fatal(err)
	}
	if got := contents(t, dir)["meta/labels"]; got != "app=\"web\"\ntier=\"back\"" {
		t.Fatalf("labels after relabel: %q", got)
	}
}
