//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// With the API server gone, pods keep running and podline keeps restarting
// their containers; the statuses of what happened meanwhile reach the API
// once it is back, and later changes flow as before.
func TestClusterAPIServerRestart(t *testing.T) {
	n := startNode(t)
	n.waitReady(60 * time.Second)
	// The container exits 3 when /tmp/exit appears; each restart is a new
	// container with a fresh /tmp.
	p := n.apiPod("survivor", "while [ ! -e /tmp/exit ]; do sleep 0.2; done; exit 3")
	p = n.createPod(p)
	p = n.waitAPIPod(n.name, p.Name, "Running", 60*time.Second, podRunning)
	uid := string(p.UID)
	sandboxes := runtimePods(t, uid)
	first := runningContainers(t, uid)
	if len(sandboxes) != 1 || len(first) != 1 {
		t.Fatalf("runtime: sandboxes %v, running containers %v", sandboxes, first)
	}

	// Whatever happens below, later tests need the API server.
	t.Cleanup(func() { n.cp.run(t, "start-apiserver") })
	n.cp.run(t, "stop-apiserver")
	down := time.Now()
	if _, err := n.cp.admin.CoreV1().Pods(n.name).Get(apiCtx, p.Name, metav1.GetOptions{}); err == nil {
		t.Fatalf("the API server still answers after stop-apiserver")
	}

	exitContainer(t, first[0])
	var second []string
	eventually(t, 30*time.Second, "container restarted while the API server is down", func() (bool, string) {
		second = runningContainers(t, uid)
		return len(second) == 1 && second[0] != first[0], fmt.Sprintf("running %v", second)
	})
	if now := runtimePods(t, uid); len(now) != 1 || now[0] != sandboxes[0] {
		t.Fatalf("sandbox changed while the API server was down: %v → %v", sandboxes, now)
	}
	time.Sleep(3 * time.Second) // a few failed status writes and lease renewals
	n.cp.run(t, "start-apiserver")
	t.Logf("API server down for %s", time.Since(down).Round(100*time.Millisecond))

	back := time.Now()
	n.waitAPIPod(n.name, p.Name, "showing the restart made during the outage", 40*time.Second, func(p *v1.Pod) bool {
		return exitedWith3(p, first[0]) && p.Status.ContainerStatuses[0].RestartCount >= 1 &&
			p.Status.ContainerStatuses[0].ContainerID == "containerd://"+second[0]
	})
	t.Logf("API server back → the outage's status in the API: %s", time.Since(back))

	// The combined restart, then a change after it.
	n.cp.run(t, "restart-apiserver")
	exitContainer(t, second[0])
	changed := time.Now()
	n.waitAPIPod(n.name, p.Name, "showing the exit after the restart", 40*time.Second, func(p *v1.Pod) bool {
		return exitedWith3(p, second[0])
	})
	t.Logf("exit after an API server restart → in the API: %s", time.Since(changed))
	if now := runtimePods(t, uid); len(now) != 1 || now[0] != sandboxes[0] {
		t.Errorf("sandbox changed across the API server restarts: %v → %v", sandboxes, now)
	}
	ready := time.Now()
	n.waitReady(60 * time.Second)
	t.Logf("node Ready after the restarts: %s", time.Since(ready))

	// New pods arrive through the watch, which client-go's reflector
	// re-establishes with a back-off that grew during the outage: up to
	// 30 s doubled by jitter, as for kubelet.
	created := time.Now()
	late := n.createPod(n.apiPod("after-restart", "while true; do sleep 1; done"))
	n.waitAPIPod(n.name, late.Name, "Running", 90*time.Second, podRunning)
	t.Logf("pod created after the restarts → Running: %s", time.Since(created))
}

// exitContainer makes the test container exit with code 3.
func exitContainer(t *testing.T, id string) {
	t.Helper()
	resp, err := runtime.ExecSync(context.Background(), id, []string{"touch", "/tmp/exit"}, 10*time.Second)
	if err != nil || resp.ExitCode != 0 {
		t.Fatalf("exec in %s: %v %+v", id, err, resp)
	}
}

// exitedWith3 reports whether the pod's status records container id as
// terminated with exit code 3, as its current or its last state.
func exitedWith3(p *v1.Pod, id string) bool {
	if len(p.Status.ContainerStatuses) != 1 {
		return false
	}
	cs := p.Status.ContainerStatuses[0]
	for _, term := range []*v1.ContainerStateTerminated{cs.State.Terminated, cs.LastTerminationState.Terminated} {
		if term != nil && term.ExitCode == 3 && term.ContainerID == "containerd://"+id {
			return true
		}
	}
	return false
}
