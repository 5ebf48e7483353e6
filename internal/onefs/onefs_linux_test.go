package onefs

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// tree makes files (content = path) and directories (names ending in "/")
// under root.
func tree(t *testing.T, root string, paths ...string) {
	t.Helper()
	for _, p := range paths {
		full := filepath.Join(root, p)
		if strings.HasSuffix(p, "/") {
			if err := os.MkdirAll(full, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(p), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func exists(t *testing.T, p string) bool {
	t.Helper()
	_, err := os.Lstat(p)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	return err == nil
}

// mount mounts and unmounts at the end of the test, before the temporary
// directories go.
func mount(t *testing.T, source, target, fstype string, flags uintptr) {
	t.Helper()
	if err := unix.Mount(source, target, fstype, flags, ""); err != nil {
		t.Fatalf("mount %s on %s (the tests run as root): %v", source, target, err)
	}
	t.Cleanup(func() {
		if err := unix.Unmount(target, unix.MNT_DETACH); err != nil {
			t.Errorf("unmount %s: %v", target, err)
		}
	})
}

func TestRemoveEntry(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	tree(t, outside, "keep")
	tree(t, dir, "pod/volumes/a/b/c/file", "pod/volumes/empty/", "pod/file", "other/file")
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	// Symlinks are removed, never followed: not a directory one, not a
	// dangling one, not one to a file.
	must(os.Symlink(outside, filepath.Join(dir, "pod/volumes/to-outside")))
	must(os.Symlink(filepath.Join(outside, "keep"), filepath.Join(dir, "pod/to-file")))
	must(os.Symlink("/nowhere", filepath.Join(dir, "pod/dangling")))
	must(unix.Mkfifo(filepath.Join(dir, "pod/fifo"), 0o600))
	// Modes do not stop root, nor this removal.
	must(os.Chmod(filepath.Join(dir, "pod/volumes/a/b"), 0))
	// More entries than one directory read returns.
	for i := range 1100 {
		must(os.WriteFile(filepath.Join(dir, "pod/volumes/empty", strconv.Itoa(i)), nil, 0o644))
	}

	must(RemoveEntry(dir, "pod"))
	if exists(t, filepath.Join(dir, "pod")) {
		t.Error("pod left")
	}
	if !exists(t, filepath.Join(dir, "other/file")) || !exists(t, filepath.Join(outside, "keep")) {
		t.Error("removed more than the entry")
	}
	must(RemoveEntry(dir, "pod"))                           // gone: nothing to do
	must(RemoveEntry(filepath.Join(dir, "missing"), "pod")) // no directory: nothing either

	// An entry that is a symlink goes, its target stays.
	must(os.Symlink(outside, filepath.Join(dir, "link")))
	must(RemoveEntry(dir, "link"))
	if exists(t, filepath.Join(dir, "link")) || !exists(t, filepath.Join(outside, "keep")) {
		t.Error("symlink entry not removed, or followed")
	}
	// An entry that is a file.
	must(RemoveEntry(dir, "other"))
	if exists(t, filepath.Join(dir, "other")) {
		t.Error("other left")
	}
}

func TestRemoveEntryRefusesPaths(t *testing.T) {
	dir := t.TempDir()
	tree(t, dir, "a/b/file", "x/")
	for _, name := range []string{"", ".", "..", "a/b", "../" + filepath.Base(dir), "/etc", "x\x00"} {
		if err := RemoveEntry(filepath.Join(dir, "x"), name); !errors.Is(err, ErrNotName) {
			t.Errorf("RemoveEntry(%q) = %v, want ErrNotName", name, err)
		}
	}
	if !exists(t, filepath.Join(dir, "a/b/file")) || !exists(t, filepath.Join(dir, "x")) {
		t.Error("a refused name removed something")
	}
}

// A mount left below the entry (an unmount that failed) is not removed
// through, whatever is mounted: a tmpfs (another device), a bind mount of
// a directory on the same filesystem (same device, another mount), a
// bind-mounted file. Everything else goes.
func TestRemoveEntryStopsAtMounts(t *testing.T) {
	dir, host := t.TempDir(), t.TempDir()
	tree(t, host, "data/keep", "file")
	tree(t, dir, "pod/volumes/tmp/", "pod/volumes/bind/", "pod/volumes/file", "pod/volumes/plain/file", "pod/other")
	mount(t, "tmpfs", filepath.Join(dir, "pod/volumes/tmp"), "tmpfs", 0)
	tree(t, filepath.Join(dir, "pod/volumes/tmp"), "in-tmpfs")
	mount(t, filepath.Join(host, "data"), filepath.Join(dir, "pod/volumes/bind"), "", unix.MS_BIND)
	mount(t, filepath.Join(host, "file"), filepath.Join(dir, "pod/volumes/file"), "", unix.MS_BIND)

	err := RemoveEntry(dir, "pod")
	if !errors.Is(err, ErrOtherMount) {
		t.Fatalf("error %v, want ErrOtherMount", err)
	}
	for _, keep := range []string{
		filepath.Join(host, "data/keep"), filepath.Join(host, "file"),
		filepath.Join(dir, "pod/volumes/tmp/in-tmpfs"), filepath.Join(dir, "pod/volumes/bind/keep"),
	} {
		if !exists(t, keep) {
			t.Errorf("removed through a mount: %s", keep)
		}
	}
	for _, gone := range []string{"pod/volumes/plain", "pod/other"} {
		if exists(t, filepath.Join(dir, gone)) {
			t.Errorf("%s left beside the mounts", gone)
		}
	}
	if data, err := os.ReadFile(filepath.Join(host, "file")); err != nil || string(data) != "file" {
		t.Errorf("bind-mounted file: %q, %v", data, err)
	}
}

func TestRemoveEntryThatIsAMount(t *testing.T) {
	dir := t.TempDir()
	tree(t, dir, "pod/")
	mount(t, "tmpfs", filepath.Join(dir, "pod"), "tmpfs", 0)
	tree(t, filepath.Join(dir, "pod"), "keep")
	if err := RemoveEntry(dir, "pod"); !errors.Is(err, ErrOtherMount) {
		t.Fatalf("error %v, want ErrOtherMount", err)
	}
	if !exists(t, filepath.Join(dir, "pod/keep")) {
		t.Error("removed inside a mount on the entry itself")
	}
}
