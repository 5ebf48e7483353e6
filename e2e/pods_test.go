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

const busybox = "docker.io/library/busybox:1.36"

// pod renders a one-container static pod. script runs under sh; a TERM
// trap makes it stop promptly, as a well-behaved process does.
func pod(name, policy, script string, extra ...string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: %s
spec:
  restartPolicy: %s
  terminationGracePeriodSeconds: 5
%s
  containers:
  - name: app
    image: %s
    command: ["sh", "-c", %q]
`, name, policy, strings.Join(extra, "\n"), busybox, "trap 'exit 0' TERM; "+script)
}

func TestBusyboxRunsAndLogs(t *testing.T) {
	a := startAgent(t)
	start := time.Now()
	a.writeManifest("hello.yaml", pod("hello", "Always", "echo hello from podline; while true; do sleep 1; done"))
	p := a.waitRunning("hello", 30*time.Second)
	t.Logf("manifest written → Running in /pods: %s", time.Since(start))

	if p.Status.PodIP == "" || !strings.HasPrefix(p.Status.PodIP, "10.88.") {
		t.Errorf("pod IP = %q, want one from the CNI bridge (10.88.0.0/16)", p.Status.PodIP)
	}
	if got := p.Spec.NodeName; got != nodeName {
		t.Errorf("nodeName = %q", got)
	}
	cs := p.Status.ContainerStatuses[0]
	if !strings.HasPrefix(cs.ContainerID, "containerd://") || cs.ImageID == "" {
		t.Errorf("container status = %+v", cs)
	}
	deadline := time.Now().Add(10 * time.Second)
	for !contains(a.readLog(p, "app", 0), "hello from podline") {
		if time.Now().After(deadline) {
			t.Fatalf("log file never got the output; it holds %q", a.readLog(p, "app", 0))
		}
		time.Sleep(20 * time.Millisecond)
	}
	if len(runtimePods(t, string(p.UID))) != 1 {
		t.Fatalf("want exactly one sandbox")
	}

	start = time.Now()
	a.removeManifest("hello.yaml")
	a.waitGone("hello", string(p.UID), 30*time.Second)
	t.Logf("manifest removed → pod gone from runtime and /pods: %s", time.Since(start))
	for _, hier := range []string{"memory", "cpu", "pids", "unified"} {
		dir := filepath.Join("/sys/fs/cgroup", hier, a.cgroup, "kubepods", "besteffort", "pod"+string(p.UID))
		if _, err := os.Stat(dir); err == nil {
			t.Errorf("pod cgroup %s left behind", dir)
		}
	}
	if _, err := os.Stat(filepath.Join(a.logs, fmt.Sprintf("default_%s_%s", p.Name, p.UID))); err == nil {
		t.Errorf("pod log directory left behind")
	}
}

func TestHostNetworkPod(t *testing.T) {
	a := startAgent(t)
	a.writeManifest("hostnet.yaml", pod("hostnet", "Always", "while true; do sleep 1; done", "  hostNetwork: true"))
	p := a.waitRunning("hostnet", 30*time.Second)
	if p.Status.PodIP == "" || p.Status.PodIP != p.Status.HostIP {
		t.Fatalf("host-network pod IP %q, host IP %q: want the node's address", p.Status.PodIP, p.Status.HostIP)
	}
}

func TestOnFailureRestartsWithBackoff(t *testing.T) {
	a := startAgent(t)
	a.writeManifest("crash.yaml", pod("crash", "OnFailure", "echo run; exit 3"))
	// The first exit restarts at once; the second waits out a 10s back-off.
	p := a.waitPod("crash", "in CrashLoopBackOff", 60*time.Second, func(p *v1.Pod) bool {
		cs := p.Status.ContainerStatuses
		return len(cs) == 1 && cs[0].State.Waiting != nil && cs[0].State.Waiting.Reason == "CrashLoopBackOff"
	})
	cs := p.Status.ContainerStatuses[0]
	if cs.RestartCount < 1 {
		t.Fatalf("restartCount = %d", cs.RestartCount)
	}
	if term := cs.LastTerminationState.Terminated; term == nil || term.ExitCode != 3 {
		t.Fatalf("lastState = %+v, want exit code 3", cs.LastTerminationState)
	}
	backoffFrom := time.Now()
	p = a.waitPod("crash", "restarted after the back-off", 30*time.Second, func(p *v1.Pod) bool {
		return p.Status.ContainerStatuses[0].RestartCount > cs.RestartCount
	})
	waited := time.Since(backoffFrom)
	t.Logf("restart %d came %s after CrashLoopBackOff was reported", p.Status.ContainerStatuses[0].RestartCount, waited)
	if waited > 15*time.Second {
		t.Fatalf("back-off lasted %s, want about 10s", waited)
	}
	if !contains(a.readLog(p, "app", 1), "run") {
		t.Fatalf("the restarted container's log (1.log) lacks its output")
	}
}

func TestNeverEndsFailed(t *testing.T) {
	a := startAgent(t)
	a.writeManifest("never.yaml", pod("never", "Never", "exit 3"))
	p := a.waitPod("never", "Failed", 30*time.Second, func(p *v1.Pod) bool { return p.Status.Phase == v1.PodFailed })
	term := p.Status.ContainerStatuses[0].State.Terminated
	if term == nil || term.ExitCode != 3 || term.Reason != "Error" {
		t.Fatalf("terminated = %+v", p.Status.ContainerStatuses[0].State)
	}
	if rc := p.Status.ContainerStatuses[0].RestartCount; rc != 0 {
		t.Fatalf("restartCount = %d under Never", rc)
	}
}

func TestInitContainerRunsFirst(t *testing.T) {
	a := startAgent(t)
	a.writeManifest("init.yaml", fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: init
spec:
  terminationGracePeriodSeconds: 5
  volumes:
  - name: work
    emptyDir: {}
  initContainers:
  - name: setup
    image: %[1]s
    command: ["sh", "-c", "sleep 1; echo ready > /work/flag"]
    volumeMounts:
    - {name: work, mountPath: /work}
  containers:
  - name: app
    image: %[1]s
    command: ["sh", "-c", "trap 'exit 0' TERM; cat /work/flag || exit 7; while true; do sleep 1; done"]
    volumeMounts:
    - {name: work, mountPath: /work}
`, busybox))
	p := a.waitPod("init", "initializing", 30*time.Second, func(p *v1.Pod) bool {
		return len(p.Status.InitContainerStatuses) == 1 && p.Status.InitContainerStatuses[0].State.Running != nil
	})
	if w := p.Status.ContainerStatuses[0].State.Waiting; w == nil || w.Reason != "PodInitializing" {
		t.Fatalf("app container while init runs: %+v", p.Status.ContainerStatuses[0].State)
	}
	p = a.waitRunning("init", 30*time.Second)
	init := p.Status.InitContainerStatuses[0].State.Terminated
	if init == nil || init.ExitCode != 0 {
		t.Fatalf("init container = %+v", p.Status.InitContainerStatuses[0].State)
	}
	if p.Status.ContainerStatuses[0].RestartCount != 0 {
		t.Fatalf("app restarted: it did not find the init container's file")
	}
	deadline := time.Now().Add(10 * time.Second)
	for !contains(a.readLog(p, "app", 0), "ready") {
		if time.Now().After(deadline) {
			t.Fatalf("app did not read the file init wrote; log %q", a.readLog(p, "app", 0))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestRemovedManifestStopsWithinGrace(t *testing.T) {
	a := startAgent(t)
	// sleep as PID 1 ignores SIGTERM: only the grace deadline stops it.
	a.writeManifest("stubborn.yaml", sigtermIgnoringPod("stubborn"))
	p := a.waitRunning("stubborn", 30*time.Second)
	start := time.Now()
	a.removeManifest("stubborn.yaml")
	a.waitGone("stubborn", string(p.UID), 20*time.Second)
	took := time.Since(start)
	t.Logf("stop of a container ignoring SIGTERM with a 3s grace period: %s", took)
	if took < 2*time.Second || took > 10*time.Second {
		t.Fatalf("teardown took %s, want about the 3s grace period", took)
	}
}

// A pod whose manifest went while podline was down is an orphan when it
// comes back: no source knows it, so its spec and grace period are gone.
// Its container still stops within the 3 s grace recorded on it, not the
// default 30 s.
func TestOrphanStopsWithinRecordedGrace(t *testing.T) {
	a := startAgent(t)
	a.writeManifest("orphan.yaml", sigtermIgnoringPod("orphan"))
	p := a.waitRunning("orphan", 30*time.Second)
	a.kill9()
	a.removeManifest("orphan.yaml")
	start := time.Now()
	a.start()
	a.waitGone("orphan", string(p.UID), 40*time.Second)
	took := time.Since(start)
	t.Logf("start of podline to an orphan ignoring SIGTERM gone, with a 3s grace recorded: %s", took)
	if !contains(a.out.String(), "tearing down pod no source knows") {
		t.Fatalf("the pod was not torn down as an orphan:\n%s", a.out.String())
	}
	if took < 2*time.Second || took > 15*time.Second {
		t.Fatalf("orphan teardown took %s, want about the 3s grace period recorded on its container", took)
	}
}

func TestKill9RestartAdopts(t *testing.T) {
	a := startAgent(t)
	a.writeManifest("adopt.yaml", pod("adopt", "Always", "while true; do sleep 1; done"))
	before := a.waitRunning("adopt", 30*time.Second)
	sandboxes := runtimePods(t, string(before.UID))

	a.kill9()
	a.start()
	after := a.waitRunning("adopt", 30*time.Second)
	if after.UID != before.UID {
		t.Fatalf("static pod UID changed across a restart: %s → %s", before.UID, after.UID)
	}
	if a, b := before.Status.ContainerStatuses[0].ContainerID, after.Status.ContainerStatuses[0].ContainerID; a != b {
		t.Fatalf("container replaced across a restart: %s → %s", a, b)
	}
	// Give a wrong decision time to show, then check nothing was duplicated.
	time.Sleep(2 * time.Second)
	now := runtimePods(t, string(after.UID))
	if len(now) != 1 || now[0] != sandboxes[0] {
		t.Fatalf("sandboxes before %v, after %v: want the same single sandbox", sandboxes, now)
	}
	// The restarted agent dates the pod from its sandbox, a moment after it
	// first saw the manifest; both are reported in whole seconds.
	if after.Status.StartTime == nil || after.Status.StartTime.Sub(before.Status.StartTime.Time) > time.Second {
		t.Fatalf("start time moved across the restart: %v → %v", before.Status.StartTime, after.Status.StartTime)
	}
}

func TestMalformedManifestBesideGoodOne(t *testing.T) {
	a := startAgent(t)
	a.writeManifest("bad.yaml", `apiVersion: v1
kind: Pod
metadata:
  name: bad
spec:
  containers:
  - name: app
    command: ["true"]
`)
	a.writeManifest("good.yaml", pod("good", "Always", "while true; do sleep 1; done"))
	a.waitRunning("good", 30*time.Second)
	bad := filepath.Join(a.manifests, "bad.yaml")
	deadline := time.Now().Add(10 * time.Second)
	for !(contains(a.out.String(), bad) && contains(a.out.String(), "spec.containers[0].image")) {
		if time.Now().After(deadline) {
			t.Fatalf("podline's log does not name %s and the field:\n%s", bad, a.out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	pods, err := a.pods()
	if err != nil {
		t.Fatal(err)
	}
	if len(pods) != 1 {
		t.Fatalf("pods = %d, want only the good one", len(pods))
	}

	// Breaking a running pod's manifest keeps the pod running.
	running := a.waitRunning("good", time.Second)
	a.writeManifest("good.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: good}\nspec: {containers: [{name: app, image: 5}]}\n")
	time.Sleep(3 * time.Second) // a rescan and an inotify event have passed
	still := a.waitRunning("good", time.Second)
	if still.UID != running.UID || still.Status.ContainerStatuses[0].ContainerID != running.Status.ContainerStatuses[0].ContainerID {
		t.Fatalf("a broken edit disturbed the running pod")
	}
}

// sigtermIgnoringPod is a pod with a 3 s grace period whose only container
// ignores SIGTERM (sleep as PID 1): only the grace deadline stops it.
func sigtermIgnoringPod(name string) string {
	return `apiVersion: v1
kind: Pod
metadata:
  name: ` + name + `
spec:
  terminationGracePeriodSeconds: 3
  containers:
  - name: app
    image: ` + busybox + `
    command: ["sleep", "3600"]
`
}
