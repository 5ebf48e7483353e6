package cgroupfs

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

func TestParseMountinfo(t *testing.T) {
	f := func(name, text string, want Hierarchies) {
		t.Helper()
		got := hierarchiesOf(parseMounts([]byte(text)))
		if !slices.Equal(got, want) {
			t.Errorf("%s:\n got %q\nwant %q", name, got, want)
		}
	}
	data, err := os.ReadFile(filepath.Join("testdata", "mountinfo-hybrid"))
	if err != nil {
		t.Fatal(err)
	}
	f("hybrid v1 host", string(data), Hierarchies{
		"/sys/fs/cgroup/cpu", "/sys/fs/cgroup/cpuacct", "/sys/fs/cgroup/cpuset", "/sys/fs/cgroup/memory",
		"/sys/fs/cgroup/devices", "/sys/fs/cgroup/freezer", "/sys/fs/cgroup/blkio", "/sys/fs/cgroup/pids",
		"/sys/fs/cgroup/systemd", "/sys/fs/cgroup/unified",
	})
	f("unified host", "30 23 0:26 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 rw,nsdelegate\n",
		Hierarchies{"/sys/fs/cgroup"})
	f("combined v1 controllers", "32 31 0:29 / /sys/fs/cgroup/cpu,cpuacct rw - cgroup cgroup rw,cpu,cpuacct\n",
		Hierarchies{"/sys/fs/cgroup/cpu,cpuacct"})
	f("no cgroups", "22 27 0:21 / /proc rw,relatime - proc proc rw\n", nil)
	f("empty", "", nil)
}

func TestFindHierarchies(t *testing.T) {
	h, err := FindHierarchies()
	if err != nil {
		t.Fatal(err)
	}
	if len(h) == 0 {
		t.Fatal("no cgroup hierarchy mounted")
	}
	for _, mnt := range h {
		if fi, err := os.Stat(mnt); err != nil || !fi.IsDir() {
			t.Errorf("hierarchy %s: %v", mnt, err)
		}
	}
}

// fakeHierarchies makes n plain-directory hierarchies, each holding the
// given relative directories.
func fakeHierarchies(t *testing.T, n int, dirs ...string) Hierarchies {
	t.Helper()
	root := t.TempDir()
	var h Hierarchies
	for i := range n {
		mnt := filepath.Join(root, string(rune('a'+i)))
		for _, d := range append([]string{""}, dirs...) {
			if err := os.MkdirAll(filepath.Join(mnt, d), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		h = append(h, mnt)
	}
	return h
}

func pathExists(t *testing.T, p string) bool {
	t.Helper()
	_, err := os.Stat(p)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	return err == nil
}

func TestRemovePod(t *testing.T) {
	const pod = "/kubepods/burstable/pod1234"
	h := fakeHierarchies(t, 3,
		"kubepods/burstable/pod1234/ctr-a/nested/deeper",
		"kubepods/burstable/pod1234/ctr-b",
		"kubepods/burstable/pod1234/z-last",
		"kubepods/burstable/pod9999/ctr",
		"kubepods/besteffort",
	)
	// The pod is already gone from the last hierarchy.
	if err := os.RemoveAll(filepath.Join(h[2], pod)); err != nil {
		t.Fatal(err)
	}
	if err := h.RemovePod(pod); err != nil {
		t.Fatal(err)
	}
	for _, mnt := range h {
		if pathExists(t, filepath.Join(mnt, pod)) {
			t.Errorf("%s still has the pod cgroup", mnt)
		}
		for _, keep := range []string{"kubepods/burstable", "kubepods/burstable/pod9999/ctr", "kubepods/besteffort"} {
			if !pathExists(t, filepath.Join(mnt, keep)) {
				t.Errorf("%s lost %s", mnt, keep)
			}
		}
	}
	if err := h.RemovePod(pod); err != nil {
		t.Errorf("removing again: %v", err)
	}
	if err := h.RemovePod(""); err != nil {
		t.Errorf("no pod cgroup (cgroups-per-qos off): %v", err)
	}
}

func TestRemovePodRefuses(t *testing.T) {
	h := fakeHierarchies(t, 1, "system.slice/podman", "kubepods/burstable/pod1/x/podx", "etc/pod1", "kubepods/burstable")
	f := func(parent string) {
		t.Helper()
		err := h.RemovePod(parent)
		if err == nil || !strings.Contains(err.Error(), "refusing to remove") {
			t.Errorf("RemovePod(%q) = %v, want a refusal", parent, err)
		}
	}
	f("/system.slice/podman")
	f("/kubepods")
	f("/kubepods/burstable")
	f("/kubepods/burstable/")
	f("kubepods/burstable/pod1") // relative
	f("/kubepods/../etc/pod1")
	f("/kubepods/burstable/pod1/../../../etc/pod1")
	f("/")
	// Paths that clean up to another pod's cgroup, or reach below one.
	f("/kubepods/burstable/podx/../pod1")
	f("/kubepods/burstable/pod1/x/../../pod1")
	f("/kubepods/burstable/pod1/x")
	f("/kubepods/burstable/pod1/podx")
	f("/kubepods/burstable/pod")
	f("/kubepods/burstable/pod..")
	for _, keep := range []string{"system.slice/podman", "kubepods/burstable/pod1/x/podx", "etc/pod1"} {
		if !pathExists(t, filepath.Join(h[0], keep)) {
			t.Errorf("a refused call removed %s", keep)
		}
	}
}

// "kubepods" must be a whole path element: a sibling directory whose name
// only starts with it is someone else's.
func TestRemovePodRefusesLookalikeParent(t *testing.T) {
	h := fakeHierarchies(t, 1, "kubepods-other/pod1")
	if err := h.RemovePod("/kubepods-other/pod1"); err == nil {
		t.Error("removed /kubepods-other/pod1")
	}
}

func TestRemovePodErrors(t *testing.T) {
	const pod = "/kubepods/pod77"
	h := fakeHierarchies(t, 2, "kubepods/pod77/ctr")
	// A regular file keeps one hierarchy's directory from going away
	// (cgroup directories only hold files that vanish with them).
	blocker := filepath.Join(h[0], pod, "ctr", "stray")
	if err := os.WriteFile(blocker, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	err := h.RemovePod(pod)
	if err == nil || errors.Is(err, ErrBusy) || !strings.Contains(err.Error(), filepath.Join(h[0], pod, "ctr")) {
		t.Errorf("error %v, want a non-busy error naming the stuck directory", err)
	}
	if pathExists(t, filepath.Join(h[1], pod)) {
		t.Error("a failure in one hierarchy stopped the removal in the next")
	}
}

// A cgroup with processes refuses rmdir with EBUSY, as a mount point does:
// a tmpfs mounted on a child stands in for a populated cgroup.
func TestRemovePodBusy(t *testing.T) {
	const pod = "/kubepods/besteffort/pod5"
	h := fakeHierarchies(t, 1, "kubepods/besteffort/pod5/ctr")
	busy := filepath.Join(h[0], pod, "ctr")
	if err := unix.Mount("tmpfs", busy, "tmpfs", 0, "size=4k"); err != nil {
		t.Fatalf("mount tmpfs (the tests run as root): %v", err)
	}
	t.Cleanup(func() {
		if err := unix.Unmount(busy, unix.MNT_DETACH); err != nil {
			t.Errorf("unmount %s: %v", busy, err)
		}
	})
	if err := h.RemovePod(pod); !errors.Is(err, ErrBusy) {
		t.Errorf("error %v, want ErrBusy", err)
	}
	if !pathExists(t, filepath.Join(h[0], pod)) {
		t.Error("the pod directory went away although a child is busy")
	}
}
