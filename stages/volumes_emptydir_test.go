package stages

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
	v1 "k8s.io/api/core/v1"

	"github.com/podline/podline/internal/tmpfs"
	"github.com/podline/podline/podspec"
)

// owner is "mode uid gid" of path in octal and decimal, not following a
// symlink (whose mode reads 0: it means nothing).
func owner(t *testing.T, path string) string {
	t.Helper()
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	st := fi.Sys().(*syscall.Stat_t)
	mode := st.Mode & 0o7777
	if fi.Mode()&fs.ModeSymlink != 0 {
		mode = 0
	}
	return fmt.Sprintf("%o %d %d", mode, st.Uid, st.Gid)
}

func TestSetupEmptyDirModes(t *testing.T) {
	base := t.TempDir()
	t.Cleanup(func() { unmountUnder(base) })
	old := unix.Umask(0o022)
	defer unix.Umask(old)
	f := func(name string, src v1.EmptyDirVolumeSource, fsGroup *int64, want string) {
		t.Helper()
		path := filepath.Join(base, name, "pods", "uid", "volumes", "scratch")
		marker := filepath.Join(base, name, "ready")
		if err := setupEmptyDir(path, marker, &src, fsGroup); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got := owner(t, path); got != want {
			t.Errorf("%s: root %s, want %s", name, got, want)
		}
		if _, err := os.Stat(marker); err != nil {
			t.Errorf("%s: no record of the first setup: %v", name, err)
		}
	}
	gid := int64(2000)
	mem := v1.EmptyDirVolumeSource{Medium: v1.StorageMediumMemory}
	f("disk", v1.EmptyDirVolumeSource{}, nil, "777 0 0")
	f("memory", mem, nil, "1777 0 0")
	f("disk-fsgroup", v1.EmptyDirVolumeSource{}, &gid, "2777 0 2000")
	f("memory-fsgroup", mem, &gid, "3777 0 2000")

	locked := filepath.Join(base, "locked")
	if err := os.Mkdir(locked, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := setupEmptyDir(locked, filepath.Join(base, "locked-ready"), &v1.EmptyDirVolumeSource{}, nil); err != nil {
		t.Fatal(err)
	}
	if got := owner(t, locked); got != "777 0 0" {
		t.Errorf("an existing narrower directory: %s, want 777 0 0", got)
	}
}

// With an fsGroup, the first setup gives the group the root. What is
// already in the volume (one made before markers were written, which a
// running container may be changing) is not walked: a container could
// swap a directory for a symlink to host files mid-walk.
func TestSetupEmptyDirGivesContentToFSGroup(t *testing.T) {
	base := t.TempDir()
	path := filepath.Join(base, "scratch")
	outside := filepath.Join(base, "outside")
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(outside, 0o755))
	must(os.WriteFile(filepath.Join(outside, "secret"), []byte("host"), 0o600))
	must(os.MkdirAll(filepath.Join(path, "sub"), 0o755))
	must(os.WriteFile(filepath.Join(path, "f"), []byte("x"), 0o644))
	must(os.Symlink(outside, filepath.Join(path, "link")))
	must(os.Lchown(filepath.Join(path, "f"), 1000, 1000))
	must(os.Chmod(filepath.Join(path, "sub"), 0o755))

	gid := int64(2000)
	must(setupEmptyDir(path, filepath.Join(base, "ready"), &v1.EmptyDirVolumeSource{}, &gid))
	want := map[string]string{
		"":     "2777 0 2000",
		"f":    "644 1000 1000",
		"sub":  "755 0 0",
		"link": "0 0 0",
	}
	for rel, w := range want {
		if got := owner(t, filepath.Join(path, rel)); got != w {
			t.Errorf("%q: %s, want %s", rel, got, w)
		}
	}
	for _, p := range []string{outside, filepath.Join(outside, "secret")} {
		if got := owner(t, p); got != "755 0 0" && got != "600 0 0" {
			t.Errorf("%s, outside the volume, changed: %s", p, got)
		}
	}

	// Later setups (a podline restart) leave what containers did alone.
	must(os.WriteFile(filepath.Join(path, "later"), nil, 0o600))
	must(os.Chmod(path, fs.ModeSetgid|0o770))
	must(setupEmptyDir(path, filepath.Join(base, "ready"), &v1.EmptyDirVolumeSource{}, &gid))
	// The directory's setgid gave it the group; its mode is its maker's.
	if got := owner(t, filepath.Join(path, "later")); got != "600 0 2000" {
		t.Errorf("a file made after the first setup: %s, want 600 0 2000", got)
	}
	if got := owner(t, path); got != "2770 0 2000" {
		t.Errorf("the root after a second setup: %s, want 2770 0 2000 (left as the pod made it)", got)
	}
}

// A memory emptyDir whose tmpfs is gone is new again: mounted and given
// to the group once more.
func TestSetupEmptyDirMemoryAgain(t *testing.T) {
	base := t.TempDir()
	t.Cleanup(func() { unmountUnder(base) })
	path := filepath.Join(base, "mem")
	marker := filepath.Join(base, "ready")
	gid := int64(2000)
	src := &v1.EmptyDirVolumeSource{Medium: v1.StorageMediumMemory}
	if err := setupEmptyDir(path, marker, src, &gid); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(path, "kept"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := setupEmptyDir(path, marker, src, &gid); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(path, "kept")); err != nil {
		t.Fatalf("a second setup replaced the tmpfs: %v", err)
	}
	if err := unix.Unmount(path, 0); err != nil {
		t.Fatal(err)
	}
	if err := setupEmptyDir(path, marker, src, &gid); err != nil {
		t.Fatal(err)
	}
	if mounted, err := tmpfs.IsMountPoint(path); err != nil || !mounted {
		t.Fatalf("no tmpfs after the old one went: %v %v", mounted, err)
	}
	if got := owner(t, path); got != "3777 0 2000" {
		t.Errorf("new tmpfs root: %s, want 3777 0 2000", got)
	}
}

// The volume stage takes the fsGroup from the pod and records the first
// setup in the pod directory, outside the volume.
func TestVolumeStageEmptyDirFSGroup(t *testing.T) {
	node := &Node{RootDir: t.TempDir()}
	t.Cleanup(func() { unmountUnder(node.RootDir) })
	gid := int64(3000)
	pod := unitPod(func(p *v1.Pod) {
		p.Spec.SecurityContext = &v1.PodSecurityContext{FSGroup: &gid}
		p.Spec.Volumes = []v1.Volume{
			{Name: "disk", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}},
			{Name: "mem", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{Medium: v1.StorageMediumMemory}}},
		}
	})
	s := &VolumeStage{Node: node}
	if out := s.Handle(&Work{UID: pod.UID, Pod: pod, Sync: &PodSync{}}); out.Err != nil {
		t.Fatal(out.Err)
	}
	for i, want := range []string{"2777 0 3000", "3777 0 3000"} {
		vol := &pod.Spec.Volumes[i]
		path, _ := podspec.VolumeHostPath(node, pod, vol)
		if got := owner(t, path); got != want {
			t.Errorf("%s: %s, want %s", vol.Name, got, want)
		}
		if _, err := os.Stat(s.emptyDirMarker(pod, vol)); err != nil {
			t.Errorf("%s: %v", vol.Name, err)
		}
	}
}
