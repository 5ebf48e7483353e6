//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// podline's soft RLIMIT_NOFILE lowered, while it runs, to one above the
// descriptors it holds, and new pods written: podline stays up, logs what
// failed and why (naming the file or the pod), leaves the running pod
// alone, and once the limit is raised back the new pods run without
// anyone touching them. With one descriptor to spare, what needs two at
// once fails: the cgroup notifier's v1 OOM eventfd (memory.oom_control,
// cgroup.event_control and the eventfd together), and whatever opens a
// file while another is open. While the limit holds the test reads
// podline's log and the runtime, not podline's HTTP server, whose accept
// has no descriptor either.
func TestFaultFDLimit(t *testing.T) {
	a := startAgent(t)
	a.writeManifest("steady.yaml", pod("steady", "Always", "while true; do sleep 1; done"))
	steady := a.waitRunning("steady", 30*time.Second)
	steadyID := steady.Status.ContainerStatuses[0].ContainerID
	pid := a.cmd.Process.Pid

	var old unix.Rlimit
	if err := unix.Prlimit(pid, unix.RLIMIT_NOFILE, nil, &old); err != nil {
		t.Fatal(err)
	}
	restore := func() {
		if err := unix.Prlimit(pid, unix.RLIMIT_NOFILE, &old, nil); err != nil {
			t.Errorf("restore podline's RLIMIT_NOFILE: %v", err)
		}
	}
	t.Cleanup(restore)
	open := openFDsOf(t, pid)
	limited := unix.Rlimit{Cur: uint64(open + 1), Max: old.Max}
	if err := unix.Prlimit(pid, unix.RLIMIT_NOFILE, &limited, nil); err != nil {
		t.Fatal(err)
	}
	t.Logf("podline holds %d descriptors; soft RLIMIT_NOFILE %d → %d (hard %d)", open, old.Cur, limited.Cur, old.Max)

	logged := len(a.out.String())
	limitedAt := time.Now()
	for i := range 3 {
		a.writeManifest(fmt.Sprintf("pressed-%d.yaml", i), pod(fmt.Sprintf("pressed-%d", i), "Always", "while true; do sleep 1; done"))
	}
	var failed []string
	eventually(t, 20*time.Second, "podline logs what ran out of file descriptors", func() (bool, string) {
		failed = emfileLines(a.out.String()[logged:])
		return len(failed) > 0, a.out.String()[logged:]
	})
	t.Logf("limit → first failure logged after %s", time.Since(limitedAt))
	// A few seconds at the limit: retries go by, podline must stay up.
	deadline := time.Now().Add(3 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-a.done:
			t.Fatalf("podline exited at the fd limit:\n%s", a.out.String())
		case <-time.After(100 * time.Millisecond):
		}
		st, err := runtime.ContainerStatus(context.Background(), strings.TrimPrefix(steadyID, "containerd://"))
		if err != nil || st.State != runtimeapi.ContainerState_CONTAINER_RUNNING {
			t.Fatalf("the running pod's container at the fd limit: %v, %v", st.GetState(), err)
		}
	}
	failed = emfileLines(a.out.String()[logged:])
	t.Logf("at the limit for %s: podline holds %d descriptors; %d failures logged:", time.Since(limitedAt).Round(time.Millisecond), openFDsOf(t, pid), len(failed))
	for _, line := range failed {
		t.Logf("  %s", line)
	}

	restore()
	raised := time.Now()
	for i := range 3 {
		a.waitRunning(fmt.Sprintf("pressed-%d", i), 30*time.Second)
	}
	t.Logf("limit raised → all 3 new pods Running in /pods after %s", time.Since(raised))
	p := a.waitRunning("steady", time.Second)
	if cs := p.Status.ContainerStatuses[0]; cs.RestartCount != 0 || cs.ContainerID != steadyID {
		t.Errorf("running pod disturbed by the fd limit: %s", describe(p))
	}
	// A container whose cgroup the notifier could not watch still has its
	// exit seen at once (the eBPF watch, the CRI events).
	p = a.waitRunning("pressed-0", time.Second)
	killed := time.Now()
	a.killMain(p)
	a.waitPod("pressed-0", "restarted", 10*time.Second, func(p *v1.Pod) bool {
		return len(p.Status.ContainerStatuses) == 1 && p.Status.ContainerStatuses[0].RestartCount >= 1
	})
	t.Logf("SIGKILL of a pod started at the limit → restarted in /pods after %s", time.Since(killed))
}

// emfileLines returns podline's log lines that report running out of file
// descriptors and say what for: a path or a pod (the metrics library's own
// complaint about /proc/self/stat names neither).
func emfileLines(out string) []string {
	var lines []string
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, "too many open files") && (strings.Contains(line, " path=") || strings.Contains(line, " pod=")) {
			lines = append(lines, line)
		}
	}
	return lines
}

// openFDsOf counts the open file descriptors of process pid.
func openFDsOf(t *testing.T, pid int) int {
	t.Helper()
	ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		t.Fatal(err)
	}
	return len(ents)
}
