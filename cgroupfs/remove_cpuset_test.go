package cgroupfs

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// quiesceCpuset empties and unbalances a cpuset only under a root that
// balances load; under one that does not, the kernel's removal must
// rebuild the domains, so the cpuset is left as it is.
func TestQuiesceCpusetFollowsRootBalance(t *testing.T) {
	f := func(rootFlag, wantCpus, wantFlag string) {
		t.Helper()
		mnt := t.TempDir()
		dir := filepath.Join(mnt, "kubepods", "pod1")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		write := func(d, name, v string) {
			if err := os.WriteFile(filepath.Join(d, name), []byte(v), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		write(mnt, cpusetBalanceFile, rootFlag)
		write(dir, cpusetCpusFile, "0-1")
		write(dir, cpusetBalanceFile, "1")
		quiesceCpuset(mnt, dir)
		for name, want := range map[string]string{cpusetCpusFile: wantCpus, cpusetBalanceFile: wantFlag} {
			if got, err := readCgroupFile(dir, name); err != nil || got != want {
				t.Errorf("root balance %q: %s = %q (%v), want %q", rootFlag, name, got, err, want)
			}
		}
	}
	f("1\n", "", "0")
	f("0\n", "0-1", "1")
	f("", "0-1", "1")
}

// A pod cgroup removed from the real cpuset hierarchy goes everywhere;
// one whose removal stopped after its cpuset was emptied (the pod came
// back meanwhile) is usable again once EnsurePod has run: cpus from its
// parent and load balancing back on, as a new cpuset has them.
func TestRemovePodCpuset(t *testing.T) {
	kt := newKernelTree(t)
	cpuset := kt.be.(*treeV1).cpuset
	if cpuset == "" {
		t.Skip("no v1 cpuset hierarchy mounted")
	}
	if !isCpusetV1(cpuset) {
		t.Fatalf("%s not recognised as a v1 cpuset hierarchy", cpuset)
	}
	if root, err := readCgroupFile(cpuset, cpusetBalanceFile); err != nil || !balancesLoad(root) {
		t.Skipf("the host's root cpuset does not balance load (%q, %v): removals are left to the kernel", root, err)
	}
	if err := kt.EnsureQOS(2000, 4<<30); err != nil {
		t.Fatal(err)
	}
	_, bePod := samplePodsByQOS()
	parent := kt.layout.PodParent(types.UID("cpuset-pod"), v1.PodQOSBestEffort)
	if err := kt.EnsurePod(parent, PodResources(bePod)); err != nil {
		t.Fatal(err)
	}
	cpus := kt.v1File(t, "cpuset", filepath.Dir(parent), cpusetCpusFile)
	kt.expectV1(t, "cpuset", parent, cpusetCpusFile, cpus)
	kt.expectV1(t, "cpuset", parent, cpusetBalanceFile, "1")

	quiesceCpuset(cpuset, filepath.Join(cpuset, parent))
	kt.expectV1(t, "cpuset", parent, cpusetCpusFile, "")
	kt.expectV1(t, "cpuset", parent, cpusetBalanceFile, "0")
	if err := kt.EnsurePod(parent, PodResources(bePod)); err != nil {
		t.Fatal(err)
	}
	kt.expectV1(t, "cpuset", parent, cpusetCpusFile, cpus)
	kt.expectV1(t, "cpuset", parent, cpusetBalanceFile, "1")

	if err := kt.all.RemovePod(parent); err != nil {
		t.Fatal(err)
	}
	for _, mnt := range kt.all {
		if pathExists(t, filepath.Join(mnt, parent)) {
			t.Errorf("%s still has the pod cgroup", mnt)
		}
	}
}

// A pod cgroup with a process left in it is not removed, and its cpuset
// keeps its cpus: the process, and any the runtime adds, can still run.
func TestRemovePodCpusetBusy(t *testing.T) {
	kt := newKernelTree(t)
	cpuset := kt.be.(*treeV1).cpuset
	if cpuset == "" {
		t.Skip("no v1 cpuset hierarchy mounted")
	}
	if err := kt.EnsureQOS(2000, 4<<30); err != nil {
		t.Fatal(err)
	}
	_, bePod := samplePodsByQOS()
	parent := kt.layout.PodParent(types.UID("cpuset-busy"), v1.PodQOSBestEffort)
	if err := kt.EnsurePod(parent, PodResources(bePod)); err != nil {
		t.Fatal(err)
	}
	cpus := kt.v1File(t, "cpuset", parent, cpusetCpusFile)
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { // before the tree's own cleanup, which runs last
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	if err := writeCgroupFile(filepath.Join(cpuset, parent), "cgroup.procs", strconv.Itoa(cmd.Process.Pid)); err != nil {
		t.Fatal(err)
	}
	if err := kt.all.RemovePod(parent); !errors.Is(err, ErrBusy) {
		t.Fatalf("RemovePod of a cgroup with a process: %v, want ErrBusy", err)
	}
	kt.expectV1(t, "cpuset", parent, cpusetCpusFile, cpus)
	kt.expectV1(t, "cpuset", parent, cpusetBalanceFile, "1")
}
