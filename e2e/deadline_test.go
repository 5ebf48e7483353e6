//go:build e2e

package e2e

import (
	"context"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podline/podline/cri"
)

// TestDeadlineEndsStaticPod: a restartPolicy Always pod with
// activeDeadlineSeconds: 3 ends Failed/DeadlineExceeded about 3 s after it
// started, its container stopped and never restarted, its sandbox
// stopped; a restart of podline leaves it so.
func TestDeadlineEndsStaticPod(t *testing.T) {
	const deadline = 3 * time.Second
	a := startAgent(t)
	written := time.Now()
	a.writeManifest("deadline.yaml", pod("deadline", "Always", "while true; do sleep 1; done", "  activeDeadlineSeconds: 3"))
	exceeded := func(p *v1.Pod) bool {
		return p.Status.Phase == v1.PodFailed && p.Status.Reason == "DeadlineExceeded"
	}
	var running *v1.Pod
	p := a.waitPod("deadline", "Failed/DeadlineExceeded", 30*time.Second, func(p *v1.Pod) bool {
		if running == nil && p.Status.Phase == v1.PodRunning && len(p.Status.ContainerStatuses) > 0 &&
			p.Status.ContainerStatuses[0].State.Running != nil {
			running = p.DeepCopy()
		}
		return exceeded(p)
	})
	seen := time.Now()
	// The pod started after the manifest was written and within the second
	// its start time names (/pods gives whole seconds): from the later of
	// the two, this is at most the delay past the deadline.
	start := written
	if st := p.Status.StartTime; st != nil && st.After(start) {
		start = st.Time
	}
	late := seen.Sub(start) - deadline
	t.Logf("Failed/DeadlineExceeded in /pods %s after the manifest was written: at most %s past the deadline",
		seen.Sub(written).Round(time.Millisecond), late.Round(time.Millisecond))
	if late < 0 || late > 2*time.Second {
		t.Errorf("Failed/DeadlineExceeded %s after the deadline, want within about a second", late)
	}
	if want := "Pod was active on the node longer than the specified deadline"; p.Status.Message != want {
		t.Errorf("message = %q, want %q", p.Status.Message, want)
	}
	if running == nil {
		t.Fatalf("the container was never seen running before the deadline (a loaded runtime?): %s", describe(p))
	}

	// The container stops within its grace period (the TERM trap ends it
	// after the sleep in progress) and is not restarted.
	id := running.Status.ContainerStatuses[0].ContainerID
	p = a.waitPod("deadline", "with its container terminated", 15*time.Second, func(p *v1.Pod) bool {
		return exceeded(p) && p.Status.ContainerStatuses[0].State.Terminated != nil
	})
	t.Logf("container terminated in /pods at most %s after the deadline", (time.Since(start) - deadline).Round(time.Millisecond))
	checkEnded := func(when string, p *v1.Pod) {
		t.Helper()
		cs := p.Status.ContainerStatuses[0]
		if !exceeded(p) || cs.State.Terminated == nil || cs.RestartCount != 0 || cs.ContainerID != id {
			t.Fatalf("%s: %s", when, describe(p))
		}
		ctx := context.Background()
		sbs, err := runtime.ListPodSandbox(ctx, &runtimeapi.PodSandboxFilter{
			LabelSelector: map[string]string{cri.LabelPodUID: string(p.UID)}})
		if err != nil {
			t.Fatal(err)
		}
		if len(sbs) != 1 || sbs[0].State != runtimeapi.PodSandboxState_SANDBOX_NOTREADY {
			t.Fatalf("%s: sandboxes %v, want the one sandbox, stopped", when, sbs)
		}
		cts, err := runtime.ListContainers(ctx, &runtimeapi.ContainerFilter{
			LabelSelector: map[string]string{cri.LabelPodUID: string(p.UID)}})
		if err != nil {
			t.Fatal(err)
		}
		if len(cts) != 1 || cts[0].State != runtimeapi.ContainerState_CONTAINER_EXITED {
			t.Fatalf("%s: containers %v, want the one container, exited", when, cts)
		}
	}
	time.Sleep(2 * time.Second) // room for a wrong restart
	p = a.waitPod("deadline", "still ended", time.Second, exceeded)
	checkEnded("2s after the deadline", p)

	// A restarted podline finds an exited container of a restartPolicy
	// Always pod and a stopped sandbox: the deadline, counted from the
	// sandbox, has passed, so nothing starts again.
	a.kill9()
	a.start()
	p = a.waitPod("deadline", "listed after a restart", 15*time.Second, func(*v1.Pod) bool { return true })
	if !exceeded(p) {
		t.Fatalf("first status after a restart: %s", describe(p))
	}
	time.Sleep(2 * time.Second)
	p = a.waitPod("deadline", "still ended after a restart", time.Second, exceeded)
	checkEnded("after a restart of podline", p)
}
