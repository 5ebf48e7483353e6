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
)

// TestSidecarBesideTheApp: a sidecar (an init container with restartPolicy
// Always) starts before the app, runs beside it, is restarted when it
// exits, and stops after the app when the pod goes: its TERM trap looks
// for the mark the app's left on a hostPath.
func TestSidecarBesideTheApp(t *testing.T) {
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	a := startAgent(t)
	a.writeManifest("side.yaml", fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: side
spec:
  terminationGracePeriodSeconds: 10
  volumes:
  - name: out
    hostPath: {path: %[2]s}
  initContainers:
  - name: proxy
    image: %[1]s
    restartPolicy: Always
    command: ["sh", "-c", "trap 'if test -e /out/app-stopped; then echo after > /out/proxy-stopped; else echo before > /out/proxy-stopped; fi; exit 0' TERM; touch /out/proxy-up; while true; do sleep 0.2; done"]
    volumeMounts: [{name: out, mountPath: /out}]
  containers:
  - name: app
    image: %[1]s
    command: ["sh", "-c", "trap 'touch /out/app-stopped; exit 0' TERM; test -e /out/proxy-up && echo proxy was up; while true; do sleep 0.2; done"]
    volumeMounts: [{name: out, mountPath: /out}]
`, busybox, dir))
	p := a.waitPod("side", "app and sidecar running", 60*time.Second, func(p *v1.Pod) bool {
		return p.Status.Phase == v1.PodRunning && len(p.Status.InitContainerStatuses) == 1 &&
			p.Status.InitContainerStatuses[0].State.Running != nil && len(p.Status.ContainerStatuses) == 1 &&
			p.Status.ContainerStatuses[0].State.Running != nil
	})
	if ics := p.Status.InitContainerStatuses[0]; ics.Started == nil || !*ics.Started || !ics.Ready {
		t.Errorf("sidecar status %+v, want started and ready", ics)
	}
	deadline := time.Now().Add(10 * time.Second)
	for !contains(a.readLog(p, "app", 0), "proxy was up") {
		if time.Now().After(deadline) {
			t.Fatalf("the app did not find the sidecar up: %q", a.readLog(p, "app", 0))
		}
		time.Sleep(50 * time.Millisecond)
	}

	// The sidecar dies: it comes back, the app runs on.
	appID := p.Status.ContainerStatuses[0].ContainerID
	a.killMainOf(p, "proxy")
	p = a.waitPod("side", "sidecar restarted", 60*time.Second, func(p *v1.Pod) bool {
		ics := p.Status.InitContainerStatuses[0]
		return ics.RestartCount >= 1 && ics.State.Running != nil
	})
	if cs := p.Status.ContainerStatuses[0]; cs.ContainerID != appID || cs.RestartCount != 0 {
		t.Errorf("the app was disturbed by the sidecar's restart: %+v", cs)
	}

	// The pod goes: the app stops first, the sidecar after it.
	a.removeManifest("side.yaml")
	a.waitGone("side", string(p.UID), 60*time.Second)
	// The sidecar's TERM trap saw whether the app had stopped already.
	b, err := os.ReadFile(filepath.Join(dir, "proxy-stopped"))
	if err != nil {
		t.Fatalf("the sidecar left no word of its stop: %v", err)
	}
	if got := strings.TrimSpace(string(b)); got != "after" {
		t.Errorf("the sidecar was stopped %s the app", got)
	}
}

// TestSidecarJobSucceeds: a restartPolicy Never pod whose app exits 0
// while its sidecar runs ends Succeeded; the sidecar is stopped, and its
// exit code does not fail the pod.
func TestSidecarJobSucceeds(t *testing.T) {
	a := startAgent(t)
	a.writeManifest("job.yaml", fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: job
spec:
  restartPolicy: Never
  terminationGracePeriodSeconds: 2
  initContainers:
  - name: logger
    image: %[1]s
    restartPolicy: Always
    command: ["sh", "-c", "while true; do sleep 1; done"]
  containers:
  - name: work
    image: %[1]s
    command: ["sh", "-c", "sleep 2; echo done"]
`, busybox))
	p := a.waitPod("job", "Succeeded", 60*time.Second, func(p *v1.Pod) bool { return p.Status.Phase == v1.PodSucceeded })
	if ics := p.Status.InitContainerStatuses[0]; ics.State.Terminated == nil {
		t.Errorf("sidecar still %+v in a Succeeded pod", ics.State)
	}
	if cs := p.Status.ContainerStatuses[0]; cs.State.Terminated == nil || cs.State.Terminated.ExitCode != 0 {
		t.Errorf("work %+v", cs.State)
	}
}
