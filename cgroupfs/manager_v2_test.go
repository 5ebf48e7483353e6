package cgroupfs

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// These tests run the v2 backend on plain directories standing in for a
// unified host (this project's machines are hybrid, and the cgroup2
// mount there must not get subtree_control writes). The kernel's
// interface files are plain files here: the tests check what is written.

func newFakeV2Tree(t *testing.T, root, rootEnables string) (*Tree, string) {
	t.Helper()
	mount := t.TempDir()
	if err := os.WriteFile(filepath.Join(mount, "cgroup.subtree_control"), []byte(rootEnables+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	be, err := newTreeV2(mount)
	if err != nil {
		t.Fatal(err)
	}
	return newTree(Layout{Root: root, PerQOS: true}, testLogger(t), be, Hierarchies{mount}), mount
}

func expectFile(t *testing.T, dir, name, want string) {
	t.Helper()
	got, err := readCgroupFile(dir, name)
	if err != nil {
		t.Errorf("%s: %v", filepath.Join(dir, name), err)
		return
	}
	if got != want {
		t.Errorf("%s = %q, want %q", filepath.Join(dir, name), got, want)
	}
}

func TestTreeV2(t *testing.T) {
	tree, mount := newFakeV2Tree(t, "/", "cpuset cpu io memory pids rdma")
	if err := tree.EnsureQOS(2000, 4<<30); err != nil {
		t.Fatal(err)
	}
	kubepods := filepath.Join(mount, "kubepods")
	enable := "+cpuset +cpu +io +memory +pids" // rdma is not podline's to pass on
	for _, dir := range []string{kubepods, filepath.Join(kubepods, "burstable"), filepath.Join(kubepods, "besteffort")} {
		expectFile(t, dir, "cgroup.subtree_control", enable)
	}
	expectFile(t, kubepods, "cpu.weight", "79") // 2048 shares
	expectFile(t, kubepods, "memory.max", "4294967296")
	expectFile(t, filepath.Join(kubepods, "burstable"), "cpu.weight", "1")
	expectFile(t, filepath.Join(kubepods, "besteffort"), "cpu.weight", "1")
	expectFile(t, mount, "cgroup.subtree_control", "cpuset cpu io memory pids rdma") // not podline's: untouched

	if err := tree.SetBurstableCPU(100000); err != nil {
		t.Fatal(err)
	}
	expectFile(t, filepath.Join(kubepods, "burstable"), "cpu.weight", "3906") // 102400 shares

	parent := Layout{Root: "/", PerQOS: true}.PodParent("uid-1", "Burstable")
	shares, quota, period, mem, pids := uint64(256), int64(50000), CFSPeriodUS, int64(128<<20), int64(1024)
	if err := tree.EnsurePod(parent, Resources{CPUShares: &shares, CPUQuota: &quota, CPUPeriod: &period, MemoryLimit: &mem, PidsLimit: &pids}); err != nil {
		t.Fatal(err)
	}
	pod := filepath.Join(mount, parent)
	expectFile(t, pod, "cpu.weight", "10")
	expectFile(t, pod, "cpu.max", "50000 100000")
	expectFile(t, pod, "memory.max", "134217728")
	expectFile(t, pod, "pids.max", "1024")
	expectFile(t, pod, "cgroup.subtree_control", enable)

	got, err := tree.PodLimits(parent)
	if err != nil {
		t.Fatal(err)
	}
	if SharesToWeight(*got.CPUShares) != 10 || *got.CPUQuota != quota || *got.CPUPeriod != period || *got.MemoryLimit != mem || *got.PidsLimit != pids {
		t.Errorf("PodLimits = %s", got)
	}

	// Lifting the limits; a period alone keeps the quota.
	unlimited := int64(-1)
	if err := tree.EnsurePod(parent, Resources{MemoryLimit: &unlimited, PidsLimit: &unlimited, CPUPeriod: &period}); err != nil {
		t.Fatal(err)
	}
	expectFile(t, pod, "cpu.max", "50000 100000")
	// The largest number: the kernel reads it back as "max".
	expectFile(t, pod, "memory.max", "9223372036854775807")
	expectFile(t, pod, "pids.max", "max")
	if got, err := tree.PodLimits(parent); err != nil || *got.MemoryLimit != -1 {
		t.Errorf("lifted memory limit read as %v, %v", got, err)
	}
	if err := tree.EnsurePod(parent, Resources{CPUQuota: &unlimited}); err != nil {
		t.Fatal(err)
	}
	expectFile(t, pod, "cpu.max", "max 100000")
}

func TestTreeV2RefusesUndelegatedParent(t *testing.T) {
	tree, mount := newFakeV2Tree(t, "/", "io pids")
	err := tree.EnsureQOS(1000, 0)
	if !errors.Is(err, ErrNotDelegated) {
		t.Fatalf("EnsureQOS: %v, want ErrNotDelegated", err)
	}
	if _, err := os.Stat(filepath.Join(mount, "kubepods")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("kubepods made under a parent without cpu and memory: %v", err)
	}
	expectFile(t, mount, "cgroup.subtree_control", "io pids")
}

// An existing --cgroup-root is someone else's: read, never written. Levels
// podline creates below it are its own and pass the controllers on.
func TestTreeV2CgroupRoot(t *testing.T) {
	tree, mount := newFakeV2Tree(t, "/site/podline", "cpu memory")
	site := filepath.Join(mount, "site")
	if err := os.Mkdir(site, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(site, "cgroup.subtree_control"), []byte("memory cpu\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := tree.EnsureQOS(1000, 0); err != nil {
		t.Fatal(err)
	}
	expectFile(t, site, "cgroup.subtree_control", "memory cpu")
	expectFile(t, filepath.Join(site, "podline"), "cgroup.subtree_control", "+cpu +memory")
	expectFile(t, filepath.Join(site, "podline", "kubepods"), "cpu.weight", "39")
	if _, err := os.Stat(filepath.Join(site, "podline", "kubepods", "memory.max")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("memory.max written without an allocatable memory: %v", err)
	}

	// A site root that stops passing memory on is refused.
	if err := os.WriteFile(filepath.Join(site, "cgroup.subtree_control"), []byte("cpu\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := tree.EnsureQOS(1000, 0); !errors.Is(err, ErrNotDelegated) {
		t.Errorf("EnsureQOS: %v, want ErrNotDelegated", err)
	}
}
