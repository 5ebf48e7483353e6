package cgroupfs

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	v1 "k8s.io/api/core/v1"
)

// The pod's memory limit is real: a container cgroup inside the pod, as
// the runtime makes it, with no limit of its own, is held to the pod's.
func TestTreePodMemoryLimitOOM(t *testing.T) {
	kt := newKernelTree(t)
	if err := kt.EnsureQOS(2000, 1<<30); err != nil {
		t.Fatal(err)
	}
	pod := qosPod(nil, []v1.ResourceRequirements{qosRes("", "", "1", "32Mi")})
	pod.UID = "00m00000"
	parent := kt.layout.PodParent(pod.UID, QOSClass(pod))
	if err := kt.EnsurePod(parent, PodResources(pod)); err != nil {
		t.Fatal(err)
	}
	kt.expectV1(t, "memory", parent, "memory.limit_in_bytes", strconv.Itoa(32<<20))
	memPod := filepath.Join(kt.be.(*treeV1).memory, parent)
	ctr := filepath.Join(memPod, "ctr")
	if err := os.Mkdir(ctr, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd, stdin := startInMemoryCgroup(t, ctr, "sh", "-c", "read x; "+allocate100M)
	stdin.WriteString("go\n")
	cmd.Wait()
	if got := cmd.ProcessState.String(); got != "signal: killed" {
		t.Fatalf("allocating 100 MiB under a 32 MiB pod limit ended with %q, want killed", got)
	}
	// v1 counts the kill in the victim's cgroup, and the failed charges
	// in the cgroup whose limit was hit: the pod's, not the container's.
	if kills, _, err := readFlat(filepath.Join(ctr, "memory.oom_control"), "oom_kill"); err != nil || kills != 1 {
		t.Errorf("container oom_kill = %d, %v; want 1", kills, err)
	}
	if n, err := readCgroupInt(memPod, "memory.failcnt"); err != nil || n == 0 {
		t.Errorf("pod memory.failcnt = %d, %v; want > 0", n, err)
	}
	if n, err := readCgroupInt(ctr, "memory.failcnt"); err != nil || n != 0 {
		t.Errorf("container memory.failcnt = %d, %v; want 0 (it has no limit)", n, err)
	}
	if n, err := readCgroupInt(memPod, "memory.max_usage_in_bytes"); err != nil || n > 32<<20 {
		t.Errorf("pod memory.max_usage_in_bytes = %d, %v; want at most 32 MiB", n, err)
	}
	h, err := FindHierarchies()
	if err != nil {
		t.Fatal(err)
	}
	if err := h.RemovePod(parent); err != nil {
		t.Fatal(err)
	}
	if pathExists(t, memPod) {
		t.Error("RemovePod left the pod's memory cgroup")
	}
}

// startInMemoryCgroup runs argv and moves it into the v1 memory cgroup
// dir. The command should wait on stdin until told to go: write to the
// returned pipe.
func startInMemoryCgroup(t *testing.T, dir string, argv ...string) (*exec.Cmd, *os.File) {
	t.Helper()
	stdinR, stdinW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin = stdinR
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stdinR.Close()
	t.Cleanup(func() {
		stdinW.Close()
		cmd.Process.Kill()
		cmd.Wait()
	})
	if err := os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(strconv.Itoa(cmd.Process.Pid)), 0); err != nil {
		t.Fatal(err)
	}
	return cmd, stdinW
}
