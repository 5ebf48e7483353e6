//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
	v1 "k8s.io/api/core/v1"
)

// A full --root-dir filesystem (with the pod logs on it too, as /var holds
// both on most nodes): a new pod does not start and says why, the pod that
// already runs is not disturbed, podline stays up, and once space returns
// the new pod starts without anyone touching it.
func TestFaultDiskFull(t *testing.T) {
	mnt := loopFS(t, 32)
	root, logs := filepath.Join(mnt, "root"), filepath.Join(mnt, "logs")
	a := startAgent(t, "--root-dir", root, "--pod-logs-dir", logs)
	a.root, a.logs = root, logs

	// The running pod writes under the root dir (its emptyDir) and its log
	// once, then only sleeps: what it already has must keep working.
	a.writeManifest("steady.yaml", scratchPod("steady", "echo up > /scratch/ready; echo steady up; while true; do sleep 1; done"))
	steady := a.waitRunning("steady", 60*time.Second)
	steadyID := steady.Status.ContainerStatuses[0].ContainerID

	filler := fill(t, mnt)

	// Retries of the failing start go by; nothing else may change.
	failures := a.metricSum("podline_stage_failures_total")
	fullAt := time.Now()
	a.writeManifest("late.yaml", scratchPod("late", "echo late up; while true; do sleep 1; done"))
	eventually(t, 60*time.Second, "the failing start was retried", func() (bool, string) {
		n := a.metricSum("podline_stage_failures_total")
		return n >= failures+2, fmt.Sprintf("stage failures %v (%v before the pod)", n, failures)
	})
	t.Logf("disk full → 2 failed passes of the new pod after %s", time.Since(fullAt))
	select {
	case <-a.done:
		t.Fatalf("podline exited on a full disk:\n%s", a.out.String())
	default:
	}
	late := a.waitPod("late", "Pending", time.Second, func(p *v1.Pod) bool { return p.Status.Phase == v1.PodPending })
	// The volume stage's failure reaches /pods in PodReadyToStartContainers
	// (reason FailedMount), not only in an event a standalone node does
	// not keep.
	if !strings.Contains(statusText(late), "no space left on device") {
		t.Errorf("the waiting pod's status does not say the disk is full: %s", describe(late))
	}
	if !strings.Contains(a.out.String(), "no space left on device") {
		t.Errorf("podline's log does not say the disk is full:\n%s", a.out.String())
	}
	p := a.waitRunning("steady", time.Second)
	if cs := p.Status.ContainerStatuses[0]; cs.RestartCount != 0 || cs.ContainerID != steadyID {
		t.Errorf("running pod disturbed by the full disk: %s", describe(p))
	}
	t.Logf("at the full disk: the new pod has %d sandboxes in the runtime; status %s", len(runtimePods(t, string(late.UID))), describe(late))

	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	freed := time.Now()
	a.waitRunning("late", 2*time.Minute)
	t.Logf("space freed → late pod Running in /pods: %s", time.Since(freed))
	p = a.waitRunning("steady", time.Second)
	if cs := p.Status.ContainerStatuses[0]; cs.RestartCount != 0 || cs.ContainerID != steadyID {
		t.Errorf("running pod disturbed after space returned: %s", describe(p))
	}
}

// metricSum adds every series of one metric name in podline's /metrics.
func (a *agent) metricSum(name string) float64 {
	a.t.Helper()
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/metrics", a.port))
	if err != nil {
		a.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		a.t.Fatal(err)
	}
	sum := 0.0
	for _, l := range strings.Split(string(b), "\n") {
		if !strings.HasPrefix(l, name+"{") && !strings.HasPrefix(l, name+" ") {
			continue
		}
		f, err := strconv.ParseFloat(l[strings.LastIndexByte(l, ' ')+1:], 64)
		if err != nil {
			a.t.Fatalf("metric line %q: %v", l, err)
		}
		sum += f
	}
	return sum
}

// statusText is every reason and message of a pod's status, for a search.
func statusText(p *v1.Pod) string {
	b, _ := json.Marshal(p.Status)
	return string(b)
}

// scratchPod is pod() with an emptyDir at /scratch: its directory is
// the first thing podline makes under the root dir for the pod.
func scratchPod(name, script string) string {
	return pod(name, "Always", script, "  volumes:\n  - {name: scratch, emptyDir: {}}") +
		"    volumeMounts:\n    - {name: scratch, mountPath: /scratch}\n"
}

// loopFS mounts a fresh ext4 of sizeMiB on a loop device and returns its
// mount point; the test's cleanup (after podline's, which registers later)
// unmounts it and frees the loop device. No blocks are reserved for root:
// podline runs as root and must meet the full disk as it is.
func loopFS(t *testing.T, sizeMiB int) string {
	t.Helper()
	dir := t.TempDir()
	img, mnt := filepath.Join(dir, "fs.img"), filepath.Join(dir, "mnt")
	if err := os.Mkdir(mnt, 0o755); err != nil {
		t.Fatal(err)
	}
	run := func(name string, args ...string) error {
		out, err := exec.Command(name, args...).CombinedOutput()
		if err != nil {
			return fmt.Errorf("%s %s: %v: %s", name, strings.Join(args, " "), err, out)
		}
		return nil
	}
	if err := run("truncate", "-s", fmt.Sprintf("%dM", sizeMiB), img); err != nil {
		t.Fatal(err)
	}
	if err := run("mkfs.ext4", "-q", "-F", "-m", "0", img); err != nil {
		t.Fatal(err)
	}
	dev, err := exec.Command("losetup", "--find", "--show", img).Output()
	if err != nil {
		t.Fatalf("losetup %s: %v", img, err)
	}
	loop := strings.TrimSpace(string(dev))
	t.Cleanup(func() {
		// Lazily when busy, so a failed test never leaves a mount behind.
		if err := run("umount", mnt); err != nil {
			t.Logf("unmount %s: %v; detaching lazily", mnt, err)
			run("umount", "-l", mnt)
		}
		if err := run("losetup", "-d", loop); err != nil {
			t.Errorf("free %s: %v", loop, err)
		}
	})
	if err := run("mount", loop, mnt); err != nil {
		t.Fatal(err)
	}
	return mnt
}

// fill takes every free block of the filesystem at mnt with one file and
// returns its name.
func fill(t *testing.T, mnt string) string {
	t.Helper()
	name := filepath.Join(mnt, "filler")
	var st unix.Statfs_t
	if err := unix.Statfs(mnt, &st); err != nil {
		t.Fatal(err)
	}
	// Most of it at once, short of what the file's own extent tree may
	// need; dd takes the rest until the kernel refuses.
	bulk := (st.Bavail - min(st.Bavail, 64)) * uint64(st.Bsize)
	if out, err := exec.Command("fallocate", "-l", fmt.Sprint(bulk), name).CombinedOutput(); err != nil {
		t.Fatalf("fallocate: %v: %s", err, out)
	}
	if out, err := exec.Command("dd", "if=/dev/zero", "of="+name, "bs=4k", "oflag=append", "conv=notrunc").CombinedOutput(); !strings.Contains(string(out), "No space left") {
		t.Fatalf("dd did not fill the filesystem: %v: %s", err, out)
	}
	unix.Sync()
	if err := unix.Statfs(mnt, &st); err != nil {
		t.Fatal(err)
	}
	if st.Bavail != 0 {
		t.Fatalf("filesystem at %s still has %d free blocks", mnt, st.Bavail)
	}
	t.Logf("filled %s: %d blocks of %d taken", mnt, st.Blocks-st.Bfree, st.Blocks)
	return name
}
