//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

// resourcesPod renders a one-container Burstable pod with requests and
// limits, running script.
func resourcesPod(name, script string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: %s
spec:
  terminationGracePeriodSeconds: 2
  containers:
  - name: app
    image: %s
    command: ["sh", "-c", %q]
    resources:
      requests: {cpu: 250m, memory: 64Mi}
      limits: {cpu: 1500m, memory: 128Mi}
`, name, busybox, "trap 'exit 0' TERM; "+script)
}

// cgroupFile reads one file of a pod's (or container's) cgroup in a v1
// hierarchy.
func (a *agent) cgroupFile(hier string, p *v1.Pod, container, file string) string {
	a.t.Helper()
	dir := filepath.Join("/sys/fs/cgroup", hier, a.cgroup, "kubepods", "burstable", "pod"+string(p.UID))
	if container != "" {
		dir = filepath.Join(dir, strings.TrimPrefix(container, "containerd://"))
	}
	b, err := os.ReadFile(filepath.Join(dir, file))
	if err != nil {
		a.t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

func TestPodAndContainerLimitsAreInTheCgroupFiles(t *testing.T) {
	a := startAgent(t)
	a.writeManifest("limits.yaml", resourcesPod("limits", "while true; do sleep 1; done"))
	p := a.waitRunning("limits", 30*time.Second)
	cid := p.Status.ContainerStatuses[0].ContainerID
	f := func(hier, container, file, want string) {
		t.Helper()
		if got := a.cgroupFile(hier, p, container, file); got != want {
			t.Errorf("%s %s (container %q) = %s, want %s", hier, file, container, got, want)
		}
	}
	// The pod cgroup, set by podline before the sandbox started.
	f("cpu", "", "cpu.shares", "256")
	f("cpu", "", "cpu.cfs_quota_us", "150000")
	f("cpu", "", "cpu.cfs_period_us", "100000")
	f("memory", "", "memory.limit_in_bytes", strconv.Itoa(128<<20))
	// The container cgroup, set by the runtime from the CRI resources.
	f("cpu", cid, "cpu.shares", "256")
	f("cpu", cid, "cpu.cfs_quota_us", "150000")
	f("memory", cid, "memory.limit_in_bytes", strconv.Itoa(128<<20))
	// The QoS level: Burstable pods' requests.
	if got := readTrim(t, filepath.Join("/sys/fs/cgroup/cpu", a.cgroup, "kubepods/burstable/cpu.shares")); got != "256" {
		t.Errorf("kubepods/burstable cpu.shares = %s, want 256", got)
	}
	a.removeManifest("limits.yaml")
	a.waitGone("limits", string(p.UID), 30*time.Second)
	for _, hier := range []string{"cpu", "memory", "pids", "cpuset", "unified"} {
		dir := filepath.Join("/sys/fs/cgroup", hier, a.cgroup, "kubepods", "burstable", "pod"+string(p.UID))
		if _, err := os.Stat(dir); err == nil {
			t.Errorf("pod cgroup %s left after the pod was deleted", dir)
		}
	}
}

func TestStatsShowCPUAndMemory(t *testing.T) {
	a := startAgent(t)
	a.writeManifest("burn.yaml", resourcesPod("burn", "while :; do :; done"))
	// 50 MiB written to /dev/shm stays charged to the container.
	a.writeManifest("mem.yaml", resourcesPod("mem", "head -c 52428800 /dev/zero > /dev/shm/blob; while true; do sleep 1; done"))
	a.waitRunning("burn", 30*time.Second)
	a.waitRunning("mem", 30*time.Second)
	time.Sleep(2 * time.Second)

	// Two reads apart give the CPU rate.
	a.summary()
	time.Sleep(2 * time.Second)
	s := a.summary()
	burn := findContainer(t, s, "burn-"+nodeName)
	if burn.CPU == nil || burn.CPU.UsageNanoCores == nil {
		t.Fatalf("burner has no CPU rate: %+v", burn.CPU)
	}
	cores := float64(*burn.CPU.UsageNanoCores) / 1e9
	t.Logf("busy-looping container: %.2f cores", cores)
	if cores < 0.6 || cores > 1.6 {
		t.Errorf("a busy loop uses %.2f cores, want about one", cores)
	}
	mem := findContainer(t, s, "mem-"+nodeName)
	if ws := *mem.Memory.WorkingSetBytes; ws < 50<<20 || ws > 128<<20 {
		t.Errorf("working set %d bytes, want at least the 50 MiB written", ws)
	} else {
		t.Logf("container holding 50 MiB: working set %.1f MiB", float64(ws)/(1<<20))
	}
	if mem.Memory.AvailableBytes == nil || *mem.Memory.AvailableBytes > 128<<20 {
		t.Errorf("available bytes %v, want limit minus working set", mem.Memory.AvailableBytes)
	}
	if s.Node.CPU == nil || s.Node.Memory == nil || s.Node.Fs == nil || *s.Node.Fs.CapacityBytes == 0 {
		t.Errorf("node stats incomplete: %+v", s.Node)
	}
	for _, ps := range s.Pods {
		if ps.PodRef.Name == "mem-"+nodeName && (ps.Network == nil || ps.Network.Name == "") {
			t.Errorf("pod network stats missing: %+v", ps.Network)
		}
	}

	text := a.get("/metrics/resource")
	for _, want := range []string{
		`container_memory_working_set_bytes{container="app",namespace="default",pod="mem-e2e"}`,
		`container_cpu_usage_seconds_total{container="app",namespace="default",pod="burn-e2e"}`,
		`pod_cpu_usage_seconds_total{namespace="default",pod="burn-e2e"}`,
		"node_cpu_usage_seconds_total ", "node_memory_working_set_bytes ", "container_start_time_seconds{",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("/metrics/resource lacks %s", want)
		}
	}
	if c := a.get("/metrics/cadvisor"); !strings.Contains(c, `container_memory_working_set_bytes{container="app",`) {
		t.Errorf("/metrics/cadvisor lacks container series:\n%s", c)
	}
}

func (a *agent) get(path string) string {
	a.t.Helper()
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d%s", a.port, path))
	if err != nil {
		a.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		a.t.Fatalf("GET %s: %s %v\n%s", path, resp.Status, err, b)
	}
	return string(b)
}

func (a *agent) summary() *statsapi.Summary {
	a.t.Helper()
	var s statsapi.Summary
	if err := json.Unmarshal([]byte(a.get("/stats/summary")), &s); err != nil {
		a.t.Fatal(err)
	}
	return &s
}

func findContainer(t *testing.T, s *statsapi.Summary, pod string) statsapi.ContainerStats {
	t.Helper()
	for _, p := range s.Pods {
		if p.PodRef.Name == pod && len(p.Containers) == 1 {
			return p.Containers[0]
		}
	}
	t.Fatalf("no stats for pod %s", pod)
	return statsapi.ContainerStats{}
}

func readTrim(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}
