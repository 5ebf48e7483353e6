//go:build e2e

package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
)

// The metrics API is served by a real metrics-server that controlplane.sh
// runs as a host process and registers as APIService v1beta1.metrics.k8s.io;
// it scrapes each node's /metrics/resource on the authenticated port every
// 10 s. So `kubectl top` works against podline as against a kubelet.

// podMetrics is the part of a metrics.k8s.io/v1beta1 PodMetrics the test
// reads (k8s.io/metrics is not a dependency of the module).
type podMetrics struct {
	Containers []struct {
		Name  string                       `json:"name"`
		Usage map[string]resource.Quantity `json:"usage"`
	} `json:"containers"`
}

// topRow is a line of `kubectl top`: name, millicores, memory bytes.
type topRow struct {
	cpuMilli int64
	memBytes int64
}

// parseTop reads `kubectl top pod|node --no-headers`: NAME CPU [CPU%] MEM
// [MEM%]; the CPU and memory columns are the quantities. Other lines (a
// warning on stderr) are skipped.
func parseTop(out string) map[string]topRow {
	rows := map[string]topRow{}
	sc := bufio.NewScanner(strings.NewReader(out))
line:
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		var q []resource.Quantity
		for i, s := range f {
			if i == 0 || strings.HasSuffix(s, "%") {
				continue
			}
			v, err := resource.ParseQuantity(s)
			if err != nil {
				continue line
			}
			q = append(q, v)
		}
		if len(q) == 2 {
			rows[f[0]] = topRow{cpuMilli: q[0].MilliValue(), memBytes: q[1].Value()}
		}
	}
	return rows
}

// topDiag is what a failed wait for the metrics API shows: the
// APIService's conditions and the end of metrics-server's log.
func (n *servingNode) topDiag() string {
	var b strings.Builder
	out, _ := n.kubectl(nil, "get", "apiservice", "v1beta1.metrics.k8s.io",
		"-o", `jsonpath={range .status.conditions[*]}{.type}={.status} {.reason}: {.message}{"\n"}{end}`)
	fmt.Fprintf(&b, "\nAPIService v1beta1.metrics.k8s.io: %s", out)
	if log := os.Getenv("PODLINE_METRICS_SERVER_LOG"); log != "" {
		tail, _ := exec.Command("tail", "-n", "15", log).CombinedOutput()
		fmt.Fprintf(&b, "\n%s (last lines):\n%s", log, tail)
	}
	return b.String()
}

// waitTop polls cond every second (each try runs kubectl) until it holds.
func (n *servingNode) waitTop(timeout time.Duration, what string, cond func() (bool, string)) {
	n.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ok, why := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			n.t.Fatalf("%s: not within %s; last: %s%s", what, timeout, why, n.topDiag())
		}
		time.Sleep(time.Second)
	}
}

// resourceSample is one series of podline's /metrics/resource, the one
// whose labels include all of want.
func resourceSample(text, name string, want ...string) (float64, bool) {
	for _, line := range strings.Split(text, "\n") {
		rest, ok := strings.CutPrefix(line, name)
		if !ok || (rest != "" && rest[0] != '{' && rest[0] != ' ') {
			continue
		}
		all := true
		for _, w := range want {
			all = all && strings.Contains(rest, w)
		}
		if !all {
			continue
		}
		f := strings.Fields(rest[strings.LastIndexByte(rest, '}')+1:])
		if len(f) == 0 {
			continue
		}
		v, err := strconv.ParseFloat(f[0], 64)
		return v, err == nil
	}
	return 0, false
}

func TestClusterTop(t *testing.T) {
	n := startServingNode(t)
	if out, err := n.kubectl(nil, "get", "apiservice", "v1beta1.metrics.k8s.io"); err != nil {
		t.Fatalf("no metrics API registered (a control plane from an older controlplane.sh? `scripts/controlplane.sh up` adds it): %v\n%s", err, out)
	}
	n.runningPod(n.apiPod("busy", "while true; do :; done"))
	n.runningPod(n.apiPod("idle", "sleep 3600"))
	running := time.Now()

	// Two scrapes 10 s apart make the first CPU figure.
	var pods map[string]topRow
	n.waitTop(90*time.Second, "kubectl top pod lists the busy and the idle pod", func() (bool, string) {
		out, err := n.kubectl(nil, "top", "pod", "--no-headers")
		if err != nil {
			return false, fmt.Sprintf("%v: %s", err, out)
		}
		pods = parseTop(out)
		_, busy := pods["busy"]
		_, idle := pods["idle"]
		return busy && idle, out
	})
	t.Logf("kubectl top pod: figures %s after both pods ran", time.Since(running).Round(time.Second))
	// The first figure may span the loop's start; the next ones are steady.
	n.waitTop(30*time.Second, "the busy pod at hundreds of millicores", func() (bool, string) {
		out, err := n.kubectl(nil, "top", "pod", "--no-headers")
		if err != nil {
			return false, fmt.Sprintf("%v: %s", err, out)
		}
		pods = parseTop(out)
		return pods["busy"].cpuMilli >= 300, out
	})
	busy, idle := pods["busy"], pods["idle"]
	t.Logf("kubectl top pod: busy %dm %.1fMi, idle %dm %.1fMi", busy.cpuMilli, float64(busy.memBytes)/(1<<20),
		idle.cpuMilli, float64(idle.memBytes)/(1<<20))
	if busy.cpuMilli > 1500 {
		t.Errorf("a busy loop at %dm: more than one core", busy.cpuMilli)
	}
	if idle.cpuMilli > 20 {
		t.Errorf("a sleeping pod at %dm, want about 0", idle.cpuMilli)
	}

	var node topRow
	n.waitTop(60*time.Second, "kubectl top node "+n.name, func() (bool, string) {
		out, err := n.kubectl(nil, "top", "node", n.name, "--no-headers")
		if err != nil {
			return false, fmt.Sprintf("%v: %s", err, out)
		}
		var ok bool
		node, ok = parseTop(out)[n.name]
		return ok && node.cpuMilli > 0 && node.memBytes > 0, out
	})
	out := n.mustKubectl("top", "node", n.name)
	t.Logf("kubectl top node:\n%s", strings.TrimRight(out, "\n"))
	// The node is the whole machine, the busy loop included.
	if node.cpuMilli < busy.cpuMilli/2 {
		t.Errorf("node at %dm while one of its pods uses %dm", node.cpuMilli, busy.cpuMilli)
	}

	// metrics-server's figures against podline's own /metrics/resource:
	// the busy loop's rate over about one resolution, the sleeping pod's
	// working set (which does not move).
	ms := func(pod string) (cpuMilli, memBytes int64) {
		t.Helper()
		raw := n.mustKubectl("get", "--raw", "/apis/metrics.k8s.io/v1beta1/namespaces/"+n.name+"/pods/"+pod)
		var m podMetrics
		if err := json.Unmarshal([]byte(raw), &m); err != nil || len(m.Containers) != 1 {
			t.Fatalf("PodMetrics %s: %v %s", pod, err, raw)
		}
		cpu, mem := m.Containers[0].Usage["cpu"], m.Containers[0].Usage["memory"]
		return cpu.MilliValue(), mem.Value()
	}
	sample := func(pod, metric string) float64 {
		t.Helper()
		text := n.agent.get("/metrics/resource")
		v, ok := resourceSample(text, metric, `namespace="`+n.name+`"`, `pod="`+pod+`"`, `container="app"`)
		if !ok {
			t.Fatalf("/metrics/resource has no %s for pod %s:\n%s", metric, pod, text)
		}
		return v
	}
	t0, c0 := time.Now(), sample("busy", "container_cpu_usage_seconds_total")
	time.Sleep(10 * time.Second)
	t1, c1 := time.Now(), sample("busy", "container_cpu_usage_seconds_total")
	own := int64((c1 - c0) / t1.Sub(t0).Seconds() * 1000)
	msCPU, msBusyMem := ms("busy")
	idleWS := int64(sample("idle", "container_memory_working_set_bytes"))
	_, msIdleMem := ms("idle")
	t.Logf("busy pod: podline %dm over %s, metrics-server %dm; idle pod working set: podline %d, metrics-server %d bytes",
		own, t1.Sub(t0).Round(time.Millisecond), msCPU, idleWS, msIdleMem)
	// kubectl top rounds to MiB; a shell's working set is less.
	if msBusyMem <= 0 || msIdleMem <= 0 {
		t.Errorf("memory: busy %d, idle %d bytes, want a working set", msBusyMem, msIdleMem)
	}
	if d := msCPU - own; d < -max(own/4, 150) || d > max(own/4, 150) {
		t.Errorf("busy pod CPU: metrics-server %dm, podline %dm", msCPU, own)
	}
	if d := msIdleMem - idleWS; d < -max(idleWS/10, 1<<20) || d > max(idleWS/10, 1<<20) {
		t.Errorf("idle pod working set: metrics-server %d, podline %d bytes", msIdleMem, idleWS)
	}
}
