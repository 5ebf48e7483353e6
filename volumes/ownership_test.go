package volumes

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

// TestVolumeOwnership checks what a container sees of each volume type,
// as `stat -L -c '%a %u %g'` prints it, with and without an fsGroup, and
// that the container's user (1000, in the fsGroup when there is one) can
// read every file whose mode lets it.
func TestVolumeOwnership(t *testing.T) {
	ctx := context.Background()
	cs := fake.NewClientset(
		configMap("shop", "cfg", map[string]string{"app.yaml": "port: 80", "key.pem": "k"}, nil),
		&v1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "db"}, Data: map[string][]byte{"password": []byte("hunter2")}},
	)
	(&tokenIssuer{now: time.Now}).install(cs)
	s := startSource(t, cs, nil)

	const reader = 1000
	// f sets vol up for a pod with security context sc and checks want
	// (path in the volume → "mode uid gid"); unreadable lists the files
	// the reader must not be able to read.
	f := func(vol v1.VolumeSource, sc *v1.PodSecurityContext, want map[string]string, unreadable ...string) {
		t.Helper()
		pod := testPod()
		pod.Spec.SecurityContext = sc
		dir := volumeDir(t)
		// As the volume stage leaves it.
		if err := os.Chmod(dir, 0o750); err != nil {
			t.Fatal(err)
		}
		if err := s.SetUp(ctx, pod, &v1.Volume{Name: "v", VolumeSource: vol}, dir); err != nil {
			t.Fatal(err)
		}
		var groups []int
		if g := fsGroup(pod); g >= 0 {
			groups = []int{g}
		}
		for rel, w := range want {
			path := filepath.Join(dir, rel)
			if got := statLine(t, path); got != w {
				t.Errorf("%s: %s, want %s", rel, got, w)
			}
			if fi, err := os.Stat(path); err != nil || fi.IsDir() {
				continue
			}
			if got, want := canRead(t, dir, rel, reader, groups), !slices.Contains(unreadable, rel); got != want {
				t.Errorf("%s: user %d (groups %v) can read: %v, want %v", rel, reader, groups, got, want)
			}
		}
		// The symlinks belong to the fsGroup as well.
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		wantGid := max(fsGroup(pod), 0)
		for _, e := range entries {
			if e.Type()&os.ModeSymlink == 0 {
				continue
			}
			var st syscall.Stat_t
			if err := syscall.Lstat(filepath.Join(dir, e.Name()), &st); err != nil || int(st.Gid) != wantGid {
				t.Errorf("symlink %s: group %d (%v), want %d", e.Name(), st.Gid, err, wantGid)
			}
		}
	}
	cfg := v1.LocalObjectReference{Name: "cfg"}
	fsGroup2000 := &v1.PodSecurityContext{FSGroup: ptr[int64](2000)}
	user1000 := &v1.PodSecurityContext{RunAsUser: ptr[int64](reader)}
	both := &v1.PodSecurityContext{RunAsUser: ptr[int64](reader), FSGroup: ptr[int64](2000)}

	// configMap: a world-open directory, 0644 files.
	f(v1.VolumeSource{ConfigMap: &v1.ConfigMapVolumeSource{LocalObjectReference: cfg}}, nil, map[string]string{
		".": "777 0 0", "..data": "755 0 0", "app.yaml": "644 0 0", "key.pem": "644 0 0",
	})
	// defaultMode and an item's own mode; a nested path's directory.
	withItems := v1.VolumeSource{ConfigMap: &v1.ConfigMapVolumeSource{LocalObjectReference: cfg, DefaultMode: ptr[int32](0o440), Items: []v1.KeyToPath{
		{Key: "app.yaml", Path: "conf/app.yaml"},
		{Key: "key.pem", Path: "key.pem", Mode: ptr[int32](0o600)},
	}}}
	f(withItems, user1000, map[string]string{
		".": "777 0 0", "..data": "755 0 0", "conf": "755 0 0", "conf/app.yaml": "440 0 0", "key.pem": "600 0 0",
	}, "conf/app.yaml", "key.pem")
	// fsGroup: the group owns everything, reads every file, reaches every
	// directory; setgid keeps new entries in it.
	f(withItems, both, map[string]string{
		".": "2777 0 2000", "..data": "2755 0 2000", "conf": "2755 0 2000", "conf/app.yaml": "440 0 2000", "key.pem": "640 0 2000",
	})

	// secret: the tmpfs root's 1777; group read only, never group write.
	f(v1.VolumeSource{Secret: &v1.SecretVolumeSource{SecretName: "db"}}, nil, map[string]string{
		".": "1777 0 0", "..data": "755 0 0", "password": "644 0 0",
	})
	secret0400 := v1.VolumeSource{Secret: &v1.SecretVolumeSource{SecretName: "db", DefaultMode: ptr[int32](0o400)}}
	f(secret0400, user1000, map[string]string{"password": "400 0 0"}, "password")
	f(secret0400, fsGroup2000, map[string]string{
		".": "3777 0 2000", "..data": "2755 0 2000", "password": "440 0 2000",
	})
	f(v1.VolumeSource{Secret: &v1.SecretVolumeSource{SecretName: "db", DefaultMode: ptr[int32](0o600)}}, fsGroup2000,
		map[string]string{"password": "640 0 2000"})

	// downwardAPI: like configMap.
	downward := v1.VolumeSource{DownwardAPI: &v1.DownwardAPIVolumeSource{Items: []v1.DownwardAPIVolumeFile{
		{Path: "name", FieldRef: &v1.ObjectFieldSelector{FieldPath: "metadata.name"}},
		{Path: "labels", FieldRef: &v1.ObjectFieldSelector{FieldPath: "metadata.labels"}, Mode: ptr[int32](0o600)},
	}}}
	f(downward, user1000, map[string]string{
		".": "777 0 0", "..data": "755 0 0", "name": "644 0 0", "labels": "600 0 0",
	}, "labels")
	f(downward, both, map[string]string{
		".": "2777 0 2000", "..data": "2755 0 2000", "name": "644 0 2000", "labels": "640 0 2000",
	})

	// projected: the token is 0600 and the pod user's once there is one
	// user or an fsGroup; the other files are as in their own volumes.
	projected := func(defaultMode *int32) v1.VolumeSource {
		return v1.VolumeSource{Projected: &v1.ProjectedVolumeSource{DefaultMode: defaultMode, Sources: []v1.VolumeProjection{
			{ServiceAccountToken: &v1.ServiceAccountTokenProjection{Path: "token"}},
			{ConfigMap: &v1.ConfigMapProjection{LocalObjectReference: cfg, Items: []v1.KeyToPath{{Key: "app.yaml", Path: "app.yaml"}}}},
			{DownwardAPI: &v1.DownwardAPIProjection{Items: []v1.DownwardAPIVolumeFile{
				{Path: "namespace", FieldRef: &v1.ObjectFieldSelector{FieldPath: "metadata.namespace"}},
			}}},
		}}}
	}
	f(projected(nil), nil, map[string]string{
		".": "1777 0 0", "..data": "755 0 0", "token": "644 0 0", "app.yaml": "644 0 0", "namespace": "644 0 0",
	})
	f(projected(ptr[int32](0o440)), nil, map[string]string{"token": "440 0 0", "app.yaml": "440 0 0"}, "token", "app.yaml")
	f(projected(nil), user1000, map[string]string{
		".": "1777 0 0", "token": "600 1000 0", "app.yaml": "644 0 0", "namespace": "644 0 0",
	})
	f(projected(nil), both, map[string]string{
		".": "3777 0 2000", "..data": "2755 0 2000", "token": "640 1000 2000", "app.yaml": "644 0 2000", "namespace": "644 0 2000",
	})
	// An fsGroup without a user: root's token, read through the group.
	f(projected(nil), fsGroup2000, map[string]string{"token": "640 0 2000"})
	// A container that runs as someone else: no one owner, so the token
	// stays as defaultMode says.
	other := testPod()
	other.Spec.SecurityContext = user1000
	other.Spec.InitContainers = []v1.Container{{Name: "init", SecurityContext: &v1.SecurityContext{RunAsUser: ptr[int64](1001)}}}
	dir := volumeDir(t)
	if err := s.SetUp(ctx, other, &v1.Volume{Name: "v", VolumeSource: projected(nil)}, dir); err != nil {
		t.Fatal(err)
	}
	if got := statLine(t, filepath.Join(dir, "token")); got != "644 0 0" {
		t.Errorf("token with two users: %s, want 644 0 0", got)
	}
}

func TestTokenOwner(t *testing.T) {
	f := func(podUser *int64, users []*int64, want int) {
		t.Helper()
		pod := testPod()
		if podUser != nil {
			pod.Spec.SecurityContext = &v1.PodSecurityContext{RunAsUser: podUser}
		}
		pod.Spec.Containers = nil
		for i, u := range users {
			c := v1.Container{Name: fmt.Sprint("c", i)}
			if u != nil {
				c.SecurityContext = &v1.SecurityContext{RunAsUser: u}
			}
			pod.Spec.Containers = append(pod.Spec.Containers, c)
		}
		if got := tokenOwner(pod); got != want {
			t.Fatalf("pod user %v, containers %v: owner %d, want %d", podUser, users, got, want)
		}
	}
	u := func(id int64) *int64 { return &id }
	f(nil, []*int64{nil}, -1)
	f(u(1000), []*int64{nil, nil}, 1000)
	f(nil, []*int64{u(7), u(7)}, 7)
	f(u(1000), []*int64{u(7), nil}, -1)
	f(nil, []*int64{u(7), nil}, -1)
	f(u(0), []*int64{nil}, 0)
	f(u(1000), nil, -1)
}

// fsGroupChangePolicy does not apply to these volumes: a volume whose
// directory already belongs to the fsGroup still gets every file and
// symlink given to it.
func TestFSGroupChangePolicyIgnored(t *testing.T) {
	ctx := context.Background()
	s := startSource(t, fake.NewClientset(configMap("shop", "cfg", map[string]string{"a": "1"}, nil)), nil)
	vol := &v1.Volume{Name: "v", VolumeSource: v1.VolumeSource{ConfigMap: &v1.ConfigMapVolumeSource{LocalObjectReference: v1.LocalObjectReference{Name: "cfg"}}}}
	dir := volumeDir(t)
	if err := s.SetUp(ctx, testPod(), vol, dir); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(dir, -1, 2000); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o777|os.ModeSetgid); err != nil {
		t.Fatal(err)
	}
	pod := testPod()
	policy := v1.FSGroupChangeOnRootMismatch
	pod.Spec.SecurityContext = &v1.PodSecurityContext{FSGroup: ptr[int64](2000), FSGroupChangePolicy: &policy}
	if err := s.SetUp(ctx, pod, vol, dir); err != nil {
		t.Fatal(err)
	}
	if got := statLine(t, filepath.Join(dir, "a")); got != "644 0 2000" {
		t.Fatalf("a: %s, want 644 0 2000", got)
	}
	for _, link := range []string{"a", dataLink} {
		var st syscall.Stat_t
		if err := syscall.Lstat(filepath.Join(dir, link), &st); err != nil || st.Gid != 2000 {
			t.Errorf("symlink %s: group %d (%v), want 2000", link, st.Gid, err)
		}
	}
}

// statLine is `stat -L -c '%a %u %g'`.
func statLine(t *testing.T, path string) string {
	t.Helper()
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%o %d %d", st.Mode&0o7777, st.Uid, st.Gid)
}

// canRead applies the kernel's permission bits (no capabilities, no
// ACLs) to uid and groups reading rel from inside the volume, as a
// container that mounts dir does: search on every directory from dir down
// to the file, then read.
func canRead(t *testing.T, dir, rel string, uid int, groups []int) bool {
	t.Helper()
	real, err := filepath.EvalSymlinks(filepath.Join(dir, rel))
	if err != nil {
		t.Fatal(err)
	}
	inside, err := filepath.Rel(dir, real)
	if err != nil || inside == ".." || strings.HasPrefix(inside, "../") {
		t.Fatalf("%s resolves to %s, outside the volume", rel, real)
	}
	allows := func(path string, bit uint32) bool {
		var st syscall.Stat_t
		if err := syscall.Stat(path, &st); err != nil {
			t.Fatal(err)
		}
		switch {
		case int(st.Uid) == uid:
			return st.Mode&(bit<<6) != 0
		case slices.Contains(groups, int(st.Gid)):
			return st.Mode&(bit<<3) != 0
		}
		return st.Mode&bit != 0
	}
	p := dir
	for _, elem := range strings.Split(inside, string(filepath.Separator)) {
		if !allows(p, 1) {
			return false
		}
		p = filepath.Join(p, elem)
	}
	return allows(p, 4)
}
