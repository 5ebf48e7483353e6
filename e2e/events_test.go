//go:build e2e

package e2e

import (
	"bufio"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
)

// Each event source alone, with the relist pushed out of the way, must
// see exits with codes 0, 3 and 137 (SIGKILL).
func TestEachSourceSeesExitCodes(t *testing.T) {
	for _, source := range []string{"cri", "ebpf", "cgroup"} {
		t.Run(source, func(t *testing.T) {
			a := startAgent(t, "--pleg=events", "--pleg-sources="+source, "--relist-period=1h")
			a.writeManifest("zero.yaml", pod("zero", "Never", "sleep 1; exit 0"))
			a.writeManifest("three.yaml", pod("three", "Never", "sleep 1; exit 3"))
			a.writeManifest("killed.yaml", pod("killed", "Never", "while true; do sleep 1; done"))

			p := a.waitPod("zero", "Succeeded", 20*time.Second, func(p *v1.Pod) bool { return p.Status.Phase == v1.PodSucceeded })
			expectExit(t, p, 0)
			p = a.waitPod("three", "Failed", 20*time.Second, func(p *v1.Pod) bool { return p.Status.Phase == v1.PodFailed })
			expectExit(t, p, 3)

			p = a.waitRunning("killed", 20*time.Second)
			killed := time.Now()
			a.killMain(p)
			p = a.waitPod("killed", "Failed", 5*time.Second, func(p *v1.Pod) bool { return p.Status.Phase == v1.PodFailed })
			t.Logf("%s: SIGKILL → Failed in /pods after %s", source, time.Since(killed))
			expectExit(t, p, 137)
			if d := a.metric("podline_pleg_relist_discrepancies_total"); d != 0 {
				t.Fatalf("relist discrepancies = %v", d)
			}
		})
	}
}

func expectExit(t *testing.T, p *v1.Pod, code int32) {
	t.Helper()
	term := p.Status.ContainerStatuses[0].State.Terminated
	if term == nil || term.ExitCode != code {
		t.Fatalf("%s: terminated = %+v, want exit code %d", p.Name, p.Status.ContainerStatuses[0].State, code)
	}
}

// A container over its 32 MiB memory limit is OOM-killed, and says so.
func TestOOMKilled(t *testing.T) {
	a := startAgent(t)
	a.writeManifest("oom.yaml", fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: oom
spec:
  restartPolicy: Never
  terminationGracePeriodSeconds: 2
  containers:
  - name: app
    image: %s
    # dd is the main process (exec), so the OOM victim is the container.
    command: ["sh", "-c", "sleep 1; exec dd if=/dev/zero of=/dev/null bs=100M count=1"]
    resources:
      limits: {memory: 32Mi}
`, busybox))
	p := a.waitPod("oom", "Failed", 30*time.Second, func(p *v1.Pod) bool { return p.Status.Phase == v1.PodFailed })
	term := p.Status.ContainerStatuses[0].State.Terminated
	if term == nil || term.Reason != "OOMKilled" || term.ExitCode != 137 {
		t.Fatalf("terminated = %+v, want OOMKilled with 137", p.Status.ContainerStatuses[0].State)
	}
	if n := a.metric(`podline_oom_kills_total{scope="container"}`); n < 1 {
		t.Fatalf("container OOM kills = %v", n)
	}
}

// Under churn the safety relist finds nothing the events missed.
func TestChurnLeavesNoDiscrepancies(t *testing.T) {
	a := startAgent(t, "--relist-period=2s")
	pods := sized(50, 15) // four containers each: 200 starts and exits at full size
	for i := range pods {
		a.writeManifest(fmt.Sprintf("churn%02d.yaml", i), fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: churn%02d
spec:
  restartPolicy: Never
  terminationGracePeriodSeconds: 2
  initContainers:
  - {name: init1, image: %[2]s, command: ["true"]}
  - {name: init2, image: %[2]s, command: ["sh", "-c", "exit 0"]}
  containers:
  - {name: a, image: %[2]s, command: ["sh", "-c", "sleep 0.5; exit 0"]}
  - {name: b, image: %[2]s, command: ["sh", "-c", "exit 4"]}
`, i, busybox))
	}
	for i := range pods {
		a.waitPod(fmt.Sprintf("churn%02d", i), "Failed", 120*time.Second, func(p *v1.Pod) bool { return p.Status.Phase == v1.PodFailed })
	}
	// Two more safety relists, and the 5 s grace their findings wait out.
	time.Sleep(9 * time.Second)
	if d := a.metric("podline_pleg_relist_discrepancies_total"); d != 0 {
		t.Fatalf("relist discrepancies after churn = %v", d)
	}
	if n := a.metric("podline_pleg_relist_pod_events_total"); n > 0 {
		t.Logf("relist pod events during churn: %v", n)
	}
}

// killMain SIGKILLs the container's main process, found through its cgroup.
func (a *agent) killMain(p *v1.Pod) {
	a.t.Helper()
	a.killMainID(p, p.Status.ContainerStatuses[0].ContainerID)
}

// killMainOf SIGKILLs the main process of p's init container name.
func (a *agent) killMainOf(p *v1.Pod, name string) {
	a.t.Helper()
	for _, cs := range p.Status.InitContainerStatuses {
		if cs.Name == name {
			a.killMainID(p, cs.ContainerID)
			return
		}
	}
	a.t.Fatalf("no init container %s in %s", name, describe(p))
}

func (a *agent) killMainID(p *v1.Pod, containerID string) {
	a.t.Helper()
	id := strings.TrimPrefix(containerID, "containerd://")
	pattern := filepath.Join("/sys/fs/cgroup/unified", a.cgroup, "kubepods", "*", "pod"+string(p.UID), id, "cgroup.procs")
	matches, _ := filepath.Glob(pattern)
	if len(matches) != 1 {
		a.t.Fatalf("no cgroup for container %s (%s)", id, pattern)
	}
	b, err := os.ReadFile(matches[0])
	if err != nil {
		a.t.Fatal(err)
	}
	// The container's main process is the one whose parent is outside
	// the cgroup (the runtime's shim).
	in := map[int]bool{}
	for _, f := range strings.Fields(string(b)) {
		n, _ := strconv.Atoi(f)
		in[n] = true
	}
	pid := 0
	for n := range in {
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", n))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces, so cut at ")".
		rest := string(stat[strings.LastIndexByte(string(stat), ')')+2:])
		ppid, _ := strconv.Atoi(strings.Fields(rest)[1])
		if !in[ppid] {
			pid = n
		}
	}
	if pid == 0 {
		a.t.Fatalf("no main process in %s", matches[0])
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		a.t.Fatal(err)
	}
}

// metric reads one sample from podline's /metrics.
func (a *agent) metric(name string) float64 {
	a.t.Helper()
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/metrics", a.port))
	if err != nil {
		a.t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), name+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				a.t.Fatal(err)
			}
			return f
		}
	}
	a.t.Fatalf("metric %s not exported", name)
	return 0
}
