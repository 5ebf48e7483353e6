//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podline/podline/cri"
)

// The API server goes away for 60 s (15 s unless fullSize) right after a
// burst of pod creates and deletes reached podline. Invariants: the pods
// that ran keep running (same sandbox, same container), the new ones
// start and turn Ready and the deleted ones stop, all without the API
// server; once it answers again, every status in the API converges: the
// live pods Running and Ready, the deleted ones gone, and then their
// sandboxes. Issue 15 targets 10 s for that; the test allows 30 s, so that
// a loaded machine does not fail it, and logs the figure.
func TestClusterFaultAPIServerDown(t *testing.T) {
	const (
		steadyPods = 20
		burstPods  = 10
		deletes    = 5
		bound      = 30 * time.Second
	)
	outage := sized(60*time.Second, 15*time.Second)
	n := startNode(t)
	n.waitReady(60 * time.Second)
	// The pods to delete take a quarter of the outage to stop, and the
	// burst turns Ready a third of it after it starts: their last statuses
	// are made while the API server is down, however fast podline is, and
	// the final deletes wait for it.
	stopSecs, readySecs := int64(outage/time.Second/4), int32(outage/time.Second/3)
	grace := stopSecs + 5
	slowStop := fmt.Sprintf("trap 'sleep %d; exit 0' TERM; while true; do sleep 1; done", stopSecs)
	steady := make([]*v1.Pod, steadyPods)
	for i := range steady {
		p := n.apiPod(fmt.Sprintf("steady-%d", i), slowStop)
		p.Spec.TerminationGracePeriodSeconds = &grace
		steady[i] = n.createPod(p)
	}
	took := n.waitConverged(podNames(steady), nil, 120*time.Second)
	t.Logf("%d pods Running and Ready in the API: %s", steadyPods, took.Round(100*time.Millisecond))
	type running struct{ sandbox, container string }
	before := map[string]running{}
	for _, p := range steady[deletes:] {
		uid := string(p.UID)
		sbs, cs := runtimePods(t, uid), runningContainers(t, uid)
		if len(sbs) != 1 || len(cs) != 1 {
			t.Fatalf("pod %s in the runtime: sandboxes %v, running containers %v", p.Name, sbs, cs)
		}
		before[uid] = running{sbs[0], cs[0]}
	}

	// The burst, then the outage as soon as podline has seen all of it:
	// the starts and stops, their status writes and the final deletes are
	// in flight when the API server goes.
	burst := make([]*v1.Pod, burstPods)
	for i := range burst {
		p := n.apiPod(fmt.Sprintf("burst-%d", i), "while true; do sleep 1; done")
		p.Spec.Containers[0].ReadinessProbe = &v1.Probe{
			ProbeHandler:        v1.ProbeHandler{Exec: &v1.ExecAction{Command: []string{"true"}}},
			InitialDelaySeconds: readySecs, PeriodSeconds: 1,
		}
		burst[i] = n.createPod(p)
	}
	deleted := steady[:deletes]
	n.deletePodsNamed(deleted)
	burstAt := time.Now()
	eventually100ms(t, 30*time.Second, "podline sees the burst", func() (bool, string) {
		return n.agentSaw(podNames(burst), podNames(deleted))
	})
	// Whatever happens below, later tests need the API server.
	t.Cleanup(func() { n.cp.run(t, "start-apiserver") })
	stopping := time.Now()
	n.cp.run(t, "stop-apiserver")
	down := time.Now()
	t.Logf("burst → podline saw it: %s; stop-apiserver took %s",
		stopping.Sub(burstAt).Round(100*time.Millisecond), down.Sub(stopping).Round(100*time.Millisecond))
	if _, err := n.cp.admin.CoreV1().Pods(n.name).Get(apiCtx, steady[0].Name, metav1.GetOptions{}); err == nil {
		t.Fatal("the API server still answers after stop-apiserver")
	}

	// Without the API server: burst pods start, deleted pods stop, the
	// others do not move.
	live := append(append([]*v1.Pod{}, steady[deletes:]...), burst...)
	// Bounded by the runtime's pace, not the outage's length: on a busy
	// machine containerd took 10 s to start the burst, and the short
	// outage's 15 s left its 5 s readiness delay no room. The API server
	// then stays down for as long as this takes.
	eventually(t, max(outage, 60*time.Second), "burst Ready and deletions done without the API server", func() (bool, string) {
		for _, p := range live {
			if len(runningContainers(t, string(p.UID))) != 1 {
				return false, p.Name + " not running in the runtime"
			}
		}
		if ok, why := n.agentReady(podNames(burst)); !ok {
			return false, why
		}
		// Stopped, not removed: the sandbox goes once the pod is gone
		// from the API server, whose final delete waits for it.
		for _, p := range deleted {
			if len(runningContainers(t, string(p.UID))) != 0 {
				return false, p.Name + " still has a running container"
			}
			if ready := readySandboxes(t, string(p.UID)); len(ready) != 0 {
				return false, p.Name + " still has a ready sandbox"
			}
		}
		return true, ""
	})
	t.Logf("API server down → burst Ready in /pods and deleted pods stopped in the runtime: %s", time.Since(down).Round(100*time.Millisecond))
	for time.Since(down) < outage {
		time.Sleep(time.Second)
		for uid, was := range before {
			if sbs, cs := runtimePods(t, uid), runningContainers(t, uid); len(sbs) != 1 || sbs[0] != was.sandbox || len(cs) != 1 || cs[0] != was.container {
				t.Fatalf("pod %s moved while the API server was down: sandbox %s → %v, container %s → %v", uid, was.sandbox, sbs, was.container, cs)
			}
		}
		select {
		case <-n.agent.done:
			t.Fatalf("podline exited while the API server was down:\n%s", n.agent.out.String())
		default:
		}
	}

	n.cp.run(t, "start-apiserver")
	back := time.Now()
	t.Logf("API server down for %s", back.Sub(down).Round(100*time.Millisecond))
	took = n.waitConverged(podNames(live), podNames(deleted), bound)
	t.Logf("API server answering → %d live pods Running and Ready, %d deleted pods gone, in the API: %s (issue 15 target 10 s)",
		len(live), len(deleted), took.Round(100*time.Millisecond))
	eventually(t, bound, "the deleted pods' sandboxes removed", func() (bool, string) {
		for _, p := range deleted {
			if sbs := runtimePods(t, string(p.UID)); len(sbs) != 0 {
				return false, fmt.Sprintf("%s: sandboxes %v", p.Name, sbs)
			}
		}
		return true, ""
	})
	t.Logf("API server answering → the deleted pods' sandboxes removed: %s", time.Since(back).Round(100*time.Millisecond))
	if node, err := n.node(); err == nil {
		t.Logf("node Ready condition at convergence: %s", describeCondition(condition(node, v1.NodeReady)))
	}
	t.Logf("podline's log about the API server:\n%s", strings.Join(n.agent.logLines(apiLogWords...), "\n"))
}

// agentReady reports whether podline's /pods shows every named pod Ready.
func (n *clusterNode) agentReady(names []string) (bool, string) {
	pods, err := n.agent.pods()
	if err != nil {
		return false, err.Error()
	}
	ready := map[string]bool{}
	for i := range pods {
		if pods[i].Namespace == n.name {
			ready[pods[i].Name] = podConverged(&pods[i])
		}
	}
	for _, name := range names {
		if !ready[name] {
			return false, name + " not Ready in /pods"
		}
	}
	return true, ""
}

// agentSaw reports whether podline's /pods holds every pod in present and,
// of the pods in deleting, only ones it knows are being deleted.
func (n *clusterNode) agentSaw(present, deleting []string) (bool, string) {
	pods, err := n.agent.pods()
	if err != nil {
		return false, err.Error()
	}
	have := map[string]*v1.Pod{}
	for i := range pods {
		if pods[i].Namespace == n.name {
			have[pods[i].Name] = &pods[i]
		}
	}
	for _, name := range present {
		if have[name] == nil {
			return false, name + " not in /pods"
		}
	}
	for _, name := range deleting {
		if p := have[name]; p != nil && p.DeletionTimestamp == nil {
			return false, fmt.Sprintf("%s in /pods without a deletion timestamp", name)
		}
	}
	return true, ""
}

// readySandboxes lists the pod's sandboxes the runtime has ready.
func readySandboxes(t *testing.T, uid string) []string {
	t.Helper()
	sbs, err := runtime.ListPodSandbox(context.Background(), &runtimeapi.PodSandboxFilter{
		LabelSelector: map[string]string{cri.LabelPodUID: uid},
		State:         &runtimeapi.PodSandboxStateValue{State: runtimeapi.PodSandboxState_SANDBOX_READY},
	})
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]string, len(sbs))
	for i, sb := range sbs {
		ids[i] = sb.Id
	}
	return ids
}
