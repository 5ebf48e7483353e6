//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// hookPod renders a static pod whose container "app" runs script (with a
// TERM trap) and has the lifecycle given as YAML lines under it.
func hookPod(name, policy string, grace int, script string, lifecycle ...string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: %s
spec:
  restartPolicy: %s
  terminationGracePeriodSeconds: %d
  volumes:
  - name: host
    hostPath: {path: %%HOSTDIR%%}
  containers:
  - name: app
    image: %s
    command: ["sh", "-c", %q]
    volumeMounts:
    - {name: host, mountPath: /h}
    lifecycle:
%s
`, name, policy, grace, busybox, script, strings.Join(lifecycle, "\n"))
}

// The postStart hook writes a file the app waits for and prints: the app
// sees it, and the container is reported running only once the hook
// returned (it takes 2s), while the pod's IP is out at once.
func TestHookPostStartOutputSeenByApp(t *testing.T) {
	a := startAgent(t)
	dir := t.TempDir()
	a.writeManifest("poststart.yaml", strings.ReplaceAll(hookPod("poststart", "Always", 5,
		"trap 'exit 0' TERM; while [ ! -f /tmp/hooked ]; do sleep 1; done; cat /tmp/hooked; while true; do sleep 1; done",
		`      postStart:`,
		`        exec: {command: ["sh", "-c", "sleep 2; echo written by postStart > /tmp/hooked; date +%s > /h/hooked"]}`,
	), "%HOSTDIR%", dir))
	start := time.Now()
	p := a.waitPod("poststart", "started, its hook running", 60*time.Second, func(p *v1.Pod) bool {
		cs := p.Status.ContainerStatuses
		return len(cs) == 1 && cs[0].ContainerID != ""
	})
	cs := p.Status.ContainerStatuses[0]
	if cs.State.Running != nil || cs.State.Waiting == nil || cs.State.Waiting.Reason != "ContainerCreating" || p.Status.PodIP == "" {
		t.Fatalf("while the hook runs: state %+v, pod IP %q; want waiting ContainerCreating with the IP out", cs.State, p.Status.PodIP)
	}
	created := time.Since(start)
	p = a.waitRunning("poststart", 30*time.Second)
	running := time.Since(start)
	t.Logf("manifest written → container created in /pods %s, → Running %s (the hook sleeps 2s)", created.Round(time.Millisecond), running.Round(time.Millisecond))
	if hooked, err := os.ReadFile(filepath.Join(dir, "hooked")); err != nil {
		t.Fatalf("Running before the hook wrote its file: %v", err)
	} else if started := p.Status.ContainerStatuses[0].State.Running.StartedAt; started.IsZero() || len(hooked) == 0 {
		t.Fatalf("started %s, hook file %q", started, hooked)
	}
	deadline := time.Now().Add(10 * time.Second)
	for !contains(a.readLog(p, "app", 0), "written by postStart") {
		if time.Now().After(deadline) {
			t.Fatalf("the app never printed the hook's file; its log: %q", a.readLog(p, "app", 0))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// The preStop hook runs before the container is signalled, within its
// grace period, and the stop comes once it returned: the hostPath shows
// the hook's lines before the app's TERM trap's.
func TestHookPreStopBeforeStop(t *testing.T) {
	a := startAgent(t)
	dir := t.TempDir()
	a.writeManifest("prestop.yaml", strings.ReplaceAll(hookPod("prestop", "Always", 10,
		"trap 'echo term >> /h/log; exit 0' TERM; echo started >> /h/log; while true; do sleep 1; done",
		`      preStop:`,
		`        exec: {command: ["sh", "-c", "echo prestop-begin >> /h/log; sleep 2; echo prestop-end >> /h/log"]}`,
	), "%HOSTDIR%", dir))
	p := a.waitRunning("prestop", 60*time.Second)
	start := time.Now()
	a.removeManifest("prestop.yaml")
	a.waitGone("prestop", string(p.UID), 30*time.Second)
	took := time.Since(start)
	t.Logf("manifest removed → pod gone: %s (the hook sleeps 2s, the grace period is 10s)", took.Round(time.Millisecond))
	b, err := os.ReadFile(filepath.Join(dir, "log"))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Fields(string(b)), []string{"started", "prestop-begin", "prestop-end", "term"}; strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("hostPath log %q, want %q", got, want)
	}
	if took < 2*time.Second || took > 10*time.Second {
		t.Errorf("teardown took %s, want the hook's 2s and well within the 10s grace period", took)
	}
}

// A postStart hook that fails gets its container killed, which restarts
// per its policy; podline's log has the kubelet's message, which no event
// carries.
func TestHookFailedPostStartRestarts(t *testing.T) {
	a := startAgent(t)
	a.writeManifest("hookfail.yaml", strings.ReplaceAll(hookPod("hookfail", "Always", 2,
		"trap 'exit 0' TERM; while true; do sleep 1; done",
		`      postStart:`,
		`        exec: {command: ["sh", "-c", "echo no good; exit 3"]}`,
	), "%HOSTDIR%", t.TempDir()))
	start := time.Now()
	p := a.waitPod("hookfail", "restarted", 60*time.Second, func(p *v1.Pod) bool {
		cs := p.Status.ContainerStatuses
		return len(cs) == 1 && cs[0].RestartCount >= 1 && cs[0].LastTerminationState.Terminated != nil
	})
	t.Logf("manifest written → first restart after a failed postStart in /pods: %s", time.Since(start).Round(time.Millisecond))
	if cs := p.Status.ContainerStatuses[0]; cs.State.Running != nil {
		t.Errorf("state %+v: a container whose hook fails every time shows running", cs.State)
	}
	want := `Exec lifecycle hook ([sh -c echo no good; exit 3]) for Container \"app\" in Pod \"hookfail-e2e_default(`
	if out := a.out.String(); !contains(out, "postStart hook failed") || !contains(out, want) || !contains(out, "exited with 3") {
		t.Errorf("podline's log lacks the hook's failure %s", want)
	}
}

// Against an API server: the events of a failed postStart (warning, then
// the kill) and of a failed preStop, without the hooks' output.
func TestClusterHookEvents(t *testing.T) {
	n := startNode(t)
	n.waitReady(60 * time.Second)
	p := n.apiPod("hookfail", "while true; do sleep 1; done")
	p.Spec.Containers[0].Lifecycle = &v1.Lifecycle{PostStart: &v1.LifecycleHandler{
		Exec: &v1.ExecAction{Command: []string{"sh", "-c", "echo secret; exit 3"}}}}
	created := n.createPod(p)
	n.waitEvent(created, "Warning FailedPostStartHook spec.containers{app}: PostStartHook failed")
	n.waitEvent(created, "Normal Killing spec.containers{app}: FailedPostStartHook")

	q := n.apiPod("stopfail", "while true; do sleep 1; done")
	q.Spec.Containers[0].Lifecycle = &v1.Lifecycle{PreStop: &v1.LifecycleHandler{
		Exec: &v1.ExecAction{Command: []string{"sh", "-c", "echo secret; exit 3"}}}}
	running := n.createPod(q)
	n.waitAPIPod(running.Namespace, running.Name, "Running", 60*time.Second, podRunning)
	if err := n.cp.admin.CoreV1().Pods(running.Namespace).Delete(apiCtx, running.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	n.waitEvent(running, "Warning FailedPreStopHook spec.containers{app}: PreStopHook failed")
	for _, e := range append(n.podEvents(created), n.podEvents(running)...) {
		if contains(e, "secret") {
			t.Errorf("an event carries the hook's output: %s", e)
		}
	}
}
