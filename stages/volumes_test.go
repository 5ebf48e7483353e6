package stages

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podline/podline/internal/onefs"
	"github.com/podline/podline/podspec"
)

func TestVolumeHostPath(t *testing.T) {
	node := &Node{RootDir: "/var/lib/podline"}
	pod := unitPod()
	f := func(name string, src v1.VolumeSource, want string, wantOK bool) {
		t.Helper()
		got, ok := podspec.VolumeHostPath(node, pod, &v1.Volume{Name: "vol", VolumeSource: src})
		if got != want || ok != wantOK {
			t.Errorf("%s: %q %v, want %q %v", name, got, ok, want, wantOK)
		}
	}
	f("emptyDir", v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}},
		"/var/lib/podline/pods/uid-web/volumes/kubernetes.io~empty-dir/vol", true)
	f("memory emptyDir lives in the same place", v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{Medium: v1.StorageMediumMemory}},
		"/var/lib/podline/pods/uid-web/volumes/kubernetes.io~empty-dir/vol", true)
	f("hostPath", v1.VolumeSource{HostPath: &v1.HostPathVolumeSource{Path: "/etc/ssl/certs"}}, "/etc/ssl/certs", true)
	f("configMap", v1.VolumeSource{ConfigMap: &v1.ConfigMapVolumeSource{}},
		"/var/lib/podline/pods/uid-web/volumes/kubernetes.io~configmap/vol", true)
	f("secret", v1.VolumeSource{Secret: &v1.SecretVolumeSource{}},
		"/var/lib/podline/pods/uid-web/volumes/kubernetes.io~secret/vol", true)
	f("projected", v1.VolumeSource{Projected: &v1.ProjectedVolumeSource{}},
		"/var/lib/podline/pods/uid-web/volumes/kubernetes.io~projected/vol", true)
	f("downwardAPI", v1.VolumeSource{DownwardAPI: &v1.DownwardAPIVolumeSource{}},
		"/var/lib/podline/pods/uid-web/volumes/kubernetes.io~downward-api/vol", true)
	f("nfs is not handled", v1.VolumeSource{NFS: &v1.NFSVolumeSource{}}, "", false)
	f("no source", v1.VolumeSource{}, "", false)
}

// hostPathFixture makes one of each file type in a temporary directory.
func hostPathFixture(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.Mkdir(filepath.Join(dir, "dir"), 0o755))
	must(os.WriteFile(filepath.Join(dir, "file"), []byte("keep"), 0o600))
	l, err := net.Listen("unix", filepath.Join(dir, "sock"))
	must(err)
	t.Cleanup(func() { l.Close() })
	must(unix.Mknod(filepath.Join(dir, "chr"), unix.S_IFCHR|0o600, int(unix.Mkdev(1, 3))))
	must(unix.Mknod(filepath.Join(dir, "blk"), unix.S_IFBLK|0o600, int(unix.Mkdev(7, 0))))
	return dir
}

func TestCheckHostPath(t *testing.T) {
	dir := hostPathFixture(t)
	f := func(name string, typ v1.HostPathType, rel string, wantErr string) {
		t.Helper()
		path := rel
		if !strings.HasPrefix(rel, "relative") {
			path = filepath.Join(dir, rel)
		}
		var tp *v1.HostPathType
		if typ != "<nil>" {
			tp = &typ
		}
		err := checkHostPath(path, tp)
		switch {
		case wantErr == "" && err != nil:
			t.Errorf("%s (%s %s): %v", name, typ, rel, err)
		case wantErr != "" && (err == nil || !strings.Contains(err.Error(), wantErr)):
			t.Errorf("%s (%s %s): error %v, want one containing %q", name, typ, rel, err, wantErr)
		}
	}
	for _, typ := range []v1.HostPathType{"<nil>", v1.HostPathUnset} {
		f("no check", typ, "missing", "")
		f("no check", typ, "file", "")
		f("no check", typ, "relative/path", "is not absolute")
	}
	f("directory", v1.HostPathDirectory, "dir", "")
	f("directory missing", v1.HostPathDirectory, "missing", "no such file")
	f("directory is a file", v1.HostPathDirectory, "file", "is not a Directory")
	f("directory is a socket", v1.HostPathDirectory, "sock", "is not a Directory")
	f("directory or create, exists", v1.HostPathDirectoryOrCreate, "dir", "")
	f("directory or create, is a file", v1.HostPathDirectoryOrCreate, "file", "not a directory")
	f("file", v1.HostPathFile, "file", "")
	f("file missing", v1.HostPathFile, "missing", "no such file")
	f("file is a directory", v1.HostPathFile, "dir", "is not a File")
	f("file is a device", v1.HostPathFile, "chr", "is not a File")
	f("file or create, exists", v1.HostPathFileOrCreate, "file", "")
	f("file or create, is a directory", v1.HostPathFileOrCreate, "dir", "is not a FileOrCreate")
	f("socket", v1.HostPathSocket, "sock", "")
	f("socket is a file", v1.HostPathSocket, "file", "is not a Socket")
	f("socket missing", v1.HostPathSocket, "missing", "no such file")
	f("char device", v1.HostPathCharDev, "chr", "")
	f("char device is a block device", v1.HostPathCharDev, "blk", "is not a CharDevice")
	f("char device is a file", v1.HostPathCharDev, "file", "is not a CharDevice")
	f("block device", v1.HostPathBlockDev, "blk", "")
	f("block device is a char device", v1.HostPathBlockDev, "chr", "is not a BlockDevice")
	f("block device is a directory", v1.HostPathBlockDev, "dir", "is not a BlockDevice")
	f("unknown type", v1.HostPathType("Pipe"), "file", `unknown hostPath type "Pipe"`)
	f("relative path with a type", v1.HostPathDirectoryOrCreate, "relative/dir", "is not absolute")

	if data, err := os.ReadFile(filepath.Join(dir, "file")); err != nil || string(data) != "keep" {
		t.Errorf("FileOrCreate on an existing file changed it: %q, %v", data, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "missing")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("checks without create made %s: %v", "missing", err)
	}
}

func TestCheckHostPathCreates(t *testing.T) {
	dir := t.TempDir()
	typ := v1.HostPathDirectoryOrCreate
	newDir := filepath.Join(dir, "a", "b", "c")
	if err := checkHostPath(newDir, &typ); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(newDir); err != nil || !fi.IsDir() {
		t.Errorf("DirectoryOrCreate: %v, %v; want a directory", fi, err)
	}

	typ = v1.HostPathFileOrCreate
	newFile := filepath.Join(dir, "x", "y", "file")
	if err := checkHostPath(newFile, &typ); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(newFile); err != nil || !fi.Mode().IsRegular() || fi.Size() != 0 {
		t.Errorf("FileOrCreate: %v, %v; want an empty regular file", fi, err)
	}
}

func TestVolumeStage(t *testing.T) {
	node := &Node{RootDir: t.TempDir()}
	hostDir := filepath.Join(t.TempDir(), "host", "data")
	dirOrCreate := v1.HostPathDirectoryOrCreate
	pod := unitPod(func(p *v1.Pod) {
		p.Spec.Volumes = []v1.Volume{
			{Name: "scratch", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}},
			{Name: "data", VolumeSource: v1.VolumeSource{HostPath: &v1.HostPathVolumeSource{Path: hostDir, Type: &dirOrCreate}}},
		}
	})
	s := &VolumeStage{Node: node}
	w := &Work{UID: pod.UID, Pod: pod, Sync: &PodSync{}}
	if out := s.Handle(w); out.Err != nil || !w.Sync.VolumesReady {
		t.Fatalf("setup: %v, ready %v", out.Err, w.Sync.VolumesReady)
	}
	scratch, _ := podspec.VolumeHostPath(node, pod, &pod.Spec.Volumes[0])
	for _, p := range []string{scratch, hostDir} {
		if fi, err := os.Stat(p); err != nil || !fi.IsDir() {
			t.Errorf("%s: %v", p, err)
		}
	}

	w = &Work{UID: pod.UID, Pod: pod, Sync: &PodSync{VolumesReady: true}, Teardown: true}
	if out := s.Handle(w); out.Err != nil || w.Sync.VolumesReady {
		t.Fatalf("teardown (pod still known): %v, ready %v", out.Err, w.Sync.VolumesReady)
	}
	if _, err := os.Stat(scratch); err != nil {
		t.Errorf("a teardown of a pod still known removed its volumes: %v", err)
	}
	w = &Work{UID: pod.UID, Pod: pod, Sync: &PodSync{}, Teardown: true, Removed: true}
	if out := s.Handle(w); out.Err != nil {
		t.Fatalf("teardown (removed): %v", out.Err)
	}
	if _, err := os.Stat(node.PodDir(pod.UID)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("pod directory left after removal: %v", err)
	}
	if _, err := os.Stat(hostDir); err != nil {
		t.Errorf("hostPath directory touched by teardown: %v", err)
	}

	bad := unitPod(func(p *v1.Pod) {
		p.Spec.Volumes = []v1.Volume{{Name: "cfg", VolumeSource: v1.VolumeSource{ConfigMap: &v1.ConfigMapVolumeSource{}}}}
	})
	w = &Work{UID: bad.UID, Pod: bad, Sync: &PodSync{}}
	if out := s.Handle(w); !errors.Is(out.Err, ErrMount) || w.Sync.VolumesReady {
		t.Errorf("content volume without a content source: %v, ready %v; want ErrMount", out.Err, w.Sync.VolumesReady)
	}
}

// bindMount bind-mounts source on target until the end of the test.
func bindMount(t *testing.T, source, target string) {
	t.Helper()
	if err := os.MkdirAll(target, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mount(source, target, "", unix.MS_BIND, ""); err != nil {
		t.Fatalf("bind mount %s on %s (the tests run as root): %v", source, target, err)
	}
	t.Cleanup(func() {
		if err := unix.Unmount(target, unix.MNT_DETACH); err != nil && err != unix.EINVAL && err != unix.ENOENT {
			t.Errorf("unmount %s: %v", target, err)
		}
	})
}

// hostData is a host directory with a file in it, as a hostPath volume
// that a subPath bind-mounts into the pod directory.
func hostData(t *testing.T) (dir, file string) {
	t.Helper()
	dir = t.TempDir()
	file = filepath.Join(dir, "keep")
	if err := os.WriteFile(file, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, file
}

// A teardown never deletes through a mount left in the pod directory: the
// pod's directory goes, a host directory bind-mounted inside it stays.
func TestRemovePodDirStopsAtMounts(t *testing.T) {
	node := &Node{RootDir: t.TempDir()}
	host, keep := hostData(t)
	pod := node.PodDir("uid-web")
	bindMount(t, host, filepath.Join(pod, "volume-subpaths", "data", "app", "0"))
	if err := os.WriteFile(filepath.Join(pod, "plain"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := removePodDir(node, "uid-web"); !errors.Is(err, onefs.ErrOtherMount) {
		t.Fatalf("error %v, want onefs.ErrOtherMount", err)
	}
	if _, err := os.Stat(keep); err != nil {
		t.Fatalf("deleted through the mount: %v", err)
	}
	if _, err := os.Stat(filepath.Join(pod, "plain")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the rest of the pod directory stayed: %v", err)
	}
}

// mountinfo shows mount points resolved; a root dir given through a
// symlink must still find the pod's mounts, or the teardown would go on
// to remove a directory with a host directory mounted in it.
func TestVolumeTeardownRootThroughSymlink(t *testing.T) {
	real := t.TempDir()
	link := filepath.Join(t.TempDir(), "root")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	node := &Node{RootDir: link}
	t.Cleanup(func() { unmountUnder(real) })
	host, keep := hostData(t)
	pod := unitPod(func(p *v1.Pod) {
		p.Spec.Volumes = []v1.Volume{{Name: "mem", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{Medium: v1.StorageMediumMemory}}}}
	})
	s := &VolumeStage{Node: node}
	if out := s.Handle(&Work{UID: pod.UID, Pod: pod, Sync: &PodSync{}}); out.Err != nil {
		t.Fatal(out.Err)
	}
	bindMount(t, host, filepath.Join(node.PodDir(pod.UID), "volume-subpaths", "data", "app", "0"))
	out := s.Handle(&Work{UID: pod.UID, Pod: pod, Sync: &PodSync{}, Teardown: true, Removed: true})
	if _, err := os.Stat(keep); err != nil {
		t.Fatalf("deleted through the mount: %v", err)
	}
	if out.Err != nil {
		t.Fatalf("teardown: %v", out.Err)
	}
	if _, err := os.Stat(filepath.Join(real, "pods", string(pod.UID))); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("pod directory left: %v", err)
	}
}

// A UID that is not one path element never becomes a path: building one
// is a bug, and a teardown (an orphan's, from runtime labels) leaves the
// disk alone.
func TestUnsafeUIDNeverBecomesAPath(t *testing.T) {
	base := t.TempDir()
	node := &Node{RootDir: filepath.Join(base, "root"), LogsDir: filepath.Join(base, "logs")}
	target := filepath.Join(base, "target")
	if err := os.MkdirAll(target, 0o755); err != nil {
		t.Fatal(err)
	}
	keep := filepath.Join(target, "keep")
	if err := os.WriteFile(keep, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	uid := types.UID("x" + strings.Repeat("/..", 64) + target)
	mustPanic := func(what string, fn func()) {
		t.Helper()
		defer func() {
			if r := recover(); r == nil || !strings.HasPrefix(fmt.Sprint(r), "BUG: ") {
				t.Errorf("%s: recovered %v, want a BUG panic", what, r)
			}
		}()
		fn()
	}
	mustPanic("PodDir", func() { node.PodDir(uid) })
	mustPanic("PodLogDir", func() { node.PodLogDir("default", "web", uid) })
	mustPanic("PodLogDir with a bad name", func() { node.PodLogDir("default", "a/b", "uid-web") })
	mustPanic("podspec.VolumeHostPath", func() {
		podspec.VolumeHostPath(node, unitPod(func(p *v1.Pod) { p.UID = uid }), &v1.Volume{Name: "v", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}})
	})

	s := &VolumeStage{Node: node}
	w := &Work{UID: uid, Sync: &PodSync{VolumesReady: true}, Teardown: true, Removed: true}
	if out := s.Handle(w); out.Err != nil || w.Sync.VolumesReady {
		t.Fatalf("orphan teardown: %v, ready %v", out.Err, w.Sync.VolumesReady)
	}
	for _, err := range []error{removePodDir(node, uid), removePodLogDir(node, "default", "web", uid)} {
		if err != nil {
			t.Errorf("removal for an unsafe UID: %v", err)
		}
	}
	if data, err := os.ReadFile(keep); err != nil || string(data) != "keep" {
		t.Errorf("%s: %q, %v", keep, data, err)
	}
	for _, dir := range []string{node.RootDir, node.LogsDir} {
		if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s made for an unsafe UID: %v", dir, err)
		}
	}
}
