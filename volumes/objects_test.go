package volumes

import (
	"context"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

func ptr[T any](v T) *T { return &v }

func configMap(ns, name string, data map[string]string, binary map[string][]byte) *v1.ConfigMap {
	return &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Data: data, BinaryData: binary}
}

func TestConfigMapVolume(t *testing.T) {
	ctx := context.Background()
	pod := testPod()
	cs := fake.NewClientset(configMap("shop", "cfg",
		map[string]string{"app.yaml": "port: 80", "level": "info"},
		map[string][]byte{"blob": {0, 1, 2}}))
	s := startSource(t, cs, nil)

	f := func(src v1.ConfigMapVolumeSource, want map[string]file) {
		t.Helper()
		dir := volumeDir(t)
		vol := &v1.Volume{Name: "config", VolumeSource: v1.VolumeSource{ConfigMap: &src}}
		if err := s.SetUp(ctx, pod, vol, dir); err != nil {
			t.Fatal(err)
		}
		got := readVolume(t, dir)
		if len(got) != len(want) {
			t.Fatalf("volume holds %v, want %v", got, want)
		}
		for p, w := range want {
			if g, ok := got[p]; !ok || string(g.data) != string(w.data) || g.mode != w.mode {
				t.Fatalf("%s: got %+v, want %+v", p, got[p], w)
			}
		}
	}
	ref := v1.LocalObjectReference{Name: "cfg"}
	// Every key, binaryData too, default mode.
	f(v1.ConfigMapVolumeSource{LocalObjectReference: ref}, map[string]file{
		"app.yaml": {data: []byte("port: 80"), mode: 0o644},
		"level":    {data: []byte("info"), mode: 0o644},
		"blob":     {data: []byte{0, 1, 2}, mode: 0o644},
	})
	// defaultMode applies to all keys.
	f(v1.ConfigMapVolumeSource{LocalObjectReference: ref, DefaultMode: ptr[int32](0o400)}, map[string]file{
		"app.yaml": {data: []byte("port: 80"), mode: 0o400},
		"level":    {data: []byte("info"), mode: 0o400},
		"blob":     {data: []byte{0, 1, 2}, mode: 0o400},
	})
	// Items pick keys, place them at paths and may set their own mode.
	f(v1.ConfigMapVolumeSource{LocalObjectReference: ref, DefaultMode: ptr[int32](0o440), Items: []v1.KeyToPath{
		{Key: "app.yaml", Path: "etc/app/config.yaml", Mode: ptr[int32](0o600)},
		{Key: "level", Path: "level.txt"},
	}}, map[string]file{
		"etc/app/config.yaml": {data: []byte("port: 80"), mode: 0o600},
		"level.txt":           {data: []byte("info"), mode: 0o440},
	})
	// An optional ConfigMap that does not exist is an empty volume.
	f(v1.ConfigMapVolumeSource{LocalObjectReference: v1.LocalObjectReference{Name: "absent"}, Optional: ptr(true)}, map[string]file{})
	// A missing key of an optional ConfigMap is left out.
	f(v1.ConfigMapVolumeSource{LocalObjectReference: ref, Optional: ptr(true), Items: []v1.KeyToPath{
		{Key: "level", Path: "l"}, {Key: "nope", Path: "n"},
	}}, map[string]file{"l": {data: []byte("info"), mode: 0o644}})
}

func TestConfigMapVolumeErrors(t *testing.T) {
	ctx := context.Background()
	pod := testPod()
	s := startSource(t, fake.NewClientset(configMap("shop", "cfg", map[string]string{"a": "1"}, nil)), nil)
	f := func(src v1.ConfigMapVolumeSource, class error, mention string) {
		t.Helper()
		dir := volumeDir(t)
		vol := &v1.Volume{Name: "config", VolumeSource: v1.VolumeSource{ConfigMap: &src}}
		wantErr(t, s.SetUp(ctx, pod, vol, dir), class, mention)
		if dirs := hiddenDirs(t, dir); len(dirs) != 0 {
			t.Fatalf("a failed setup wrote %v", dirs)
		}
	}
	f(v1.ConfigMapVolumeSource{LocalObjectReference: v1.LocalObjectReference{Name: "absent"}},
		ErrNotFound, `configmap "absent" not found`)
	f(v1.ConfigMapVolumeSource{LocalObjectReference: v1.LocalObjectReference{Name: "cfg"}, Items: []v1.KeyToPath{{Key: "b", Path: "b"}}},
		ErrNotFound, `configmap references non-existent config key: b`)
	f(v1.ConfigMapVolumeSource{LocalObjectReference: v1.LocalObjectReference{Name: "cfg"}, Items: []v1.KeyToPath{{Key: "a", Path: "../a"}}},
		ErrInvalid, `"../a"`)
}

// A configMap volume follows its object: a change reaches the pod as a
// request for a pass, Stale says so, and the next setup switches the new
// content in with one "..data" swap.
func TestConfigMapVolumeUpdate(t *testing.T) {
	ctx := context.Background()
	pod := testPod()
	cs := fake.NewClientset(configMap("shop", "cfg", map[string]string{"a": "1", "b": "2"}, nil))
	s := startSource(t, cs, nil)
	passes := &staleLog{}
	s.OnStale(passes.add)
	dir := volumeDir(t)
	vol := &v1.Volume{Name: "config", VolumeSource: v1.VolumeSource{ConfigMap: &v1.ConfigMapVolumeSource{
		LocalObjectReference: v1.LocalObjectReference{Name: "cfg"},
	}}}
	mark, _ := s.Stale(pod)
	if err := s.SetUp(ctx, pod, vol, dir); err != nil {
		t.Fatal(err)
	}
	s.Refreshed(pod.UID, mark)
	first := dataTarget(t, dir)
	if err := s.SetUp(ctx, pod, vol, dir); err != nil {
		t.Fatal(err)
	}
	if again := dataTarget(t, dir); again != first {
		t.Fatalf("unchanged ConfigMap rewrote the volume: %s -> %s", first, again)
	}
	if _, stale := s.Stale(pod); stale {
		t.Fatal("stale before anything changed")
	}

	waitWatches(t, cs, "configmaps", 1)
	if _, err := cs.CoreV1().ConfigMaps("shop").Update(ctx, configMap("shop", "cfg", map[string]string{"a": "1b", "c": "3"}, nil), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := passes.wait(t, 1); got[0] != pod.UID {
		t.Fatalf("passes asked for %v, want %s", got, pod.UID)
	}
	mark, stale := s.Stale(pod)
	if !stale {
		t.Fatal("not stale after its configMap changed")
	}
	if err := s.SetUp(ctx, pod, vol, dir); err != nil {
		t.Fatal(err)
	}
	s.Refreshed(pod.UID, mark)
	if got := contents(t, dir); len(got) != 2 || got["a"] != "1b" || got["c"] != "3" {
		t.Fatalf("after update the volume holds %v", got)
	}
	if dirs := hiddenDirs(t, dir); len(dirs) != 1 || dirs[0] == first {
		t.Fatalf("data directories after update: %v (first was %s)", dirs, first)
	}
	if _, stale := s.Stale(pod); stale {
		t.Fatal("still stale after the refresh")
	}
}

func TestSecretVolume(t *testing.T) {
	ctx := context.Background()
	pod := testPod()
	pod.Spec.SecurityContext = &v1.PodSecurityContext{FSGroup: ptr[int64](2000)}
	cs := fake.NewClientset(&v1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "db"},
		Data:       map[string][]byte{"password": []byte("hunter2"), "user": []byte("app")},
	})
	s := startSource(t, cs, nil)
	dir := volumeDir(t)
	vol := &v1.Volume{Name: "creds", VolumeSource: v1.VolumeSource{Secret: &v1.SecretVolumeSource{
		SecretName: "db", DefaultMode: ptr[int32](0o400),
		Items: []v1.KeyToPath{{Key: "password", Path: "pw"}},
	}}}
	if err := s.SetUp(ctx, pod, vol, dir); err != nil {
		t.Fatal(err)
	}
	if !onTmpfs(t, dir) {
		t.Fatal("secret volume is not on a tmpfs")
	}
	got := readVolume(t, dir)
	// fsGroup adds group read to the 0400 default.
	if len(got) != 1 || string(got["pw"].data) != "hunter2" || got["pw"].mode != 0o440 {
		t.Fatalf("secret volume holds %v", got)
	}
	if g := groupOf(t, dir+"/pw"); g != 2000 {
		t.Fatalf("group %d, want the fsGroup 2000", g)
	}

	missing := &v1.Volume{Name: "other", VolumeSource: v1.VolumeSource{Secret: &v1.SecretVolumeSource{SecretName: "nope"}}}
	wantErr(t, s.SetUp(ctx, pod, missing, volumeDir(t)), ErrNotFound, `secret "nope" not found`)
	noKey := &v1.Volume{Name: "other", VolumeSource: v1.VolumeSource{Secret: &v1.SecretVolumeSource{
		SecretName: "db", Items: []v1.KeyToPath{{Key: "token", Path: "t"}}}}}
	wantErr(t, s.SetUp(ctx, pod, noKey, volumeDir(t)), ErrNotFound, `references non-existent secret key: token`)
}

func TestSetUpRejectsOtherVolumes(t *testing.T) {
	s := startSource(t, fake.NewClientset(), nil)
	vol := &v1.Volume{Name: "scratch", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}}
	wantErr(t, s.SetUp(context.Background(), testPod(), vol, volumeDir(t)), ErrUnsupported, `"scratch"`)
	if Handles(vol) {
		t.Fatal("Handles(emptyDir) = true")
	}
	if !Handles(&v1.Volume{VolumeSource: v1.VolumeSource{Projected: &v1.ProjectedVolumeSource{}}}) {
		t.Fatal("Handles(projected) = false")
	}
}
