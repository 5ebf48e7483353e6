//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
)

// The eBPF ring buffer overruns while podline cannot read it, and the exit
// it dropped is still seen: the loss is counted and logged, and the
// re-read of every watched cgroup it starts finds the exit, long before
// the periodic relist would. With eBPF as the only source nothing else
// reports that exit. (A relist alone lost the race about one run in three:
// made within milliseconds of the kill, it found containerd still calling
// the container running.)
//
// Real exits cannot fill the ring on a node: it holds 262144 bytes, 6553
// events of 40 bytes, and a container sends at most two (exit, emptied),
// which podline reads within microseconds. So podline is stopped
// (SIGSTOP), and a watched container's main process is moved out of its
// cgroup and back 10,000 times: every move out empties the cgroup, one
// event each. Then a second container is killed, its events find the ring
// full, and podline is continued.
func TestFaultEBPFRingOverrun(t *testing.T) {
	a := startAgent(t, "--pleg=events", "--pleg-sources=ebpf", "--relist-period=1h")
	a.writeManifest("mover.yaml", pod("mover", "Always", "exec sleep 3600"))
	a.writeManifest("victim.yaml", pod("victim", "Never", "while true; do sleep 1; done"))
	mover := a.waitRunning("mover", 30*time.Second)
	victim := a.waitRunning("victim", 30*time.Second)
	if !strings.Contains(a.out.String(), "ebpf events attached") {
		t.Fatalf("the eBPF source did not load:\n%s", a.out.String())
	}
	moverID := mover.Status.ContainerStatuses[0].ContainerID
	cg, pid := a.containerCgroup(mover, moverID)

	park := filepath.Join("/sys/fs/cgroup/unified", fmt.Sprintf("podline-e2e-park-%d", os.Getpid()))
	if err := os.Mkdir(park, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// The mover goes home first if the test stopped half way.
		os.WriteFile(filepath.Join(cg, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0)
		if err := os.Remove(park); err != nil {
			t.Errorf("remove %s: %v", park, err)
		}
	})

	if err := a.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	stopped := true
	defer func() {
		if stopped {
			a.cmd.Process.Signal(syscall.SIGCONT)
		}
	}()
	const moves = 10000
	pidb := []byte(strconv.Itoa(pid))
	start := time.Now()
	for i := range moves {
		for _, dir := range []string{park, cg} {
			if err := os.WriteFile(filepath.Join(dir, "cgroup.procs"), pidb, 0); err != nil {
				t.Fatalf("move %d of pid %d to %s: %v", i, pid, dir, err)
			}
		}
	}
	t.Logf("%d emptied events for a watched cgroup in %s", moves, time.Since(start))
	a.killMain(victim)
	if err := a.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	stopped = false
	resumed := time.Now()

	p := a.waitPod("victim", "Failed", 20*time.Second, func(p *v1.Pod) bool { return p.Status.Phase == v1.PodFailed })
	t.Logf("podline continued → dropped exit seen in /pods after %s", time.Since(resumed))
	expectExit(t, p, 137)
	dropped := a.metric("podline_ebpf_dropped_events_total")
	if dropped == 0 {
		t.Fatalf("no drops counted after %d events into a stopped reader", moves)
	}
	if !strings.Contains(a.out.String(), "ebpf ring buffer was full, events lost") {
		t.Errorf("no log line for the lost events:\n%s", a.out.String())
	}
	t.Logf("dropped events counted: %v; ebpf exit events: %v; emptied events: %v", dropped,
		a.metric(`podline_ebpf_events_total{kind="exit"}`), a.metric(`podline_ebpf_events_total{kind="emptied"}`))
	// Thousands of "emptied" events for a container that never stopped do
	// not make it look dead.
	p = a.waitRunning("mover", 5*time.Second)
	if cs := p.Status.ContainerStatuses[0]; cs.RestartCount != 0 || cs.ContainerID != moverID {
		t.Errorf("mover disturbed by the flood: %s", describe(p))
	}
}

// containerCgroup returns a container's cgroup2 directory and the pid of
// its main process (the one whose parent, the shim, is outside it).
func (a *agent) containerCgroup(p *v1.Pod, containerID string) (string, int) {
	a.t.Helper()
	id := strings.TrimPrefix(containerID, "containerd://")
	matches, _ := filepath.Glob(filepath.Join("/sys/fs/cgroup/unified", a.cgroup, "kubepods", "*", "pod"+string(p.UID), id))
	if len(matches) != 1 {
		a.t.Fatalf("no cgroup for container %s", id)
	}
	b, err := os.ReadFile(filepath.Join(matches[0], "cgroup.procs"))
	if err != nil {
		a.t.Fatal(err)
	}
	pids := strings.Fields(string(b))
	if len(pids) != 1 {
		a.t.Fatalf("container %s runs %d processes, want its main process alone", id, len(pids))
	}
	pid, _ := strconv.Atoi(pids[0])
	return matches[0], pid
}
