package cgroupfs

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	v1 "k8s.io/api/core/v1"
)

// With the cgroupfs driver Tree.RemovePod is the hierarchies' removal of
// the pod's directories; it refuses what is not one of its pod cgroups,
// and does nothing with cgroups-per-qos off.
func TestTreeRemovePodCgroupfs(t *testing.T) {
	tree, mount := newFakeV2Tree(t, "/r", "cpu memory pids")
	parent := tree.layout.PodParent("u1", v1.PodQOSBurstable)
	leftover := filepath.Join(mount, parent, "c0ffee")
	if err := os.MkdirAll(leftover, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := tree.RemovePod(parent); err != nil {
		t.Fatal(err)
	}
	if fileExists(filepath.Join(mount, parent)) {
		t.Error("pod cgroup left")
	}
	other := filepath.Join(mount, "r", "kubepods", "keep")
	os.MkdirAll(other, 0o755)
	for _, p := range []string{"/r/kubepods/keep", "/kubepods/burstable/podu1", "/r/kubepods/burstable/podu1/c0ffee", "/r/kubepods.slice/r-kubepods-podu1.slice"} {
		if err := tree.RemovePod(p); !errors.Is(err, ErrNotPodCgroup) {
			t.Errorf("RemovePod(%q) = %v, want ErrNotPodCgroup", p, err)
		}
	}
	if !fileExists(other) {
		t.Error("a refused removal removed something")
	}
	off := newTree(Layout{Root: "/r"}, testLogger(t), nil, nil)
	if err := off.RemovePod(""); err != nil {
		t.Error(err)
	}
}
