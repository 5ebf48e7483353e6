package stages_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podline/podline/cri"
	"github.com/podline/podline/cri/fake"
	"github.com/podline/podline/stages"
)

func TestPodRunsAndTearsDown(t *testing.T) { eachQueue(t, testPodRunsAndTearsDown) }

func testPodRunsAndTearsDown(t *testing.T, q stages.QueueKind) {
	h := newHarness(t, harnessOpts{queue: q})
	pod := testPod("web", withEnv("POD", "$(NOPE)"))
	h.pipe.Upsert(pod)
	st := h.waitRunning(pod.UID)
	if st.PodIP == "" || st.StartTime == nil || st.QOSClass != v1.PodQOSBurstable {
		t.Fatalf("status lacks ip/start time/qos: %+v", st)
	}
	cs := st.ContainerStatuses[0]
	if cs.RestartCount != 0 || cs.ContainerID == "" || cs.State.Running == nil || !cs.Ready {
		t.Fatalf("container status = %+v", cs)
	}
	if n := h.fake.Calls("RunPodSandbox"); n != 1 {
		t.Fatalf("RunPodSandbox called %d times, want 1", n)
	}

	h.pipe.Remove(pod.UID)
	h.waitGone(pod.UID)
	if n, _ := h.admitter.Admitted(); n != 0 {
		t.Fatalf("admission ledger still holds %d pods", n)
	}
}

func TestFailingStepRetriesWithoutHoldingOthers(t *testing.T) {
	eachQueue(t, testFailingStepRetriesWithoutHoldingOthers)
}

func testFailingStepRetriesWithoutHoldingOthers(t *testing.T, q stages.QueueKind) {
	h := newHarness(t, harnessOpts{queue: q})
	h.fake.Inject("CreateContainer", codes.Unavailable, 2)
	a := testPod("a")
	h.pipe.Upsert(a)
	h.waitFor(a.UID, "waiting after a failed create", func(st v1.PodStatus) bool {
		w := st.ContainerStatuses[0].State.Waiting
		return w != nil && w.Reason == "CreateContainerError"
	})
	// Another pod goes through while a backs off.
	b := testPod("b")
	h.pipe.Upsert(b)
	h.waitRunning(b.UID)
	h.waitRunning(a.UID)
	if n := h.fake.Calls("CreateContainer"); n != 4 {
		t.Fatalf("CreateContainer called %d times, want 2 failures + 2 successes", n)
	}
}

func TestCrashLoopBackOff(t *testing.T) { eachQueue(t, testCrashLoopBackOff) }

func testCrashLoopBackOff(t *testing.T, q stages.QueueKind) {
	h := newHarness(t, harnessOpts{queue: q})
	pod := testPod("crash", withEnv("FAKE_EXIT_AFTER", "20ms"), withEnv("FAKE_EXIT_CODE", "3"))
	h.pipe.Upsert(pod)
	// First exit restarts at once; the second waits 10s in back-off.
	st := h.waitFor(pod.UID, "in CrashLoopBackOff", func(st v1.PodStatus) bool {
		w := st.ContainerStatuses[0].State.Waiting
		return w != nil && w.Reason == "CrashLoopBackOff"
	})
	cs := st.ContainerStatuses[0]
	if cs.RestartCount != 1 {
		t.Fatalf("restartCount = %d, want 1", cs.RestartCount)
	}
	if term := cs.LastTerminationState.Terminated; term == nil || term.ExitCode != 3 {
		t.Fatalf("lastState = %+v, want exit code 3", cs.LastTerminationState)
	}
	if st.Phase != v1.PodRunning {
		t.Fatalf("phase = %s, want Running while restarting", st.Phase)
	}
	if n := h.fake.Calls("CreateContainer"); n != 2 {
		t.Fatalf("CreateContainer called %d times during back-off, want 2", n)
	}
}

func TestRestartPolicies(t *testing.T) { eachQueue(t, testRestartPolicies) }

func testRestartPolicies(t *testing.T, q stages.QueueKind) {
	h := newHarness(t, harnessOpts{queue: q})
	never := testPod("never", withPolicy(v1.RestartPolicyNever), withEnv("FAKE_EXIT_AFTER", "10ms"), withEnv("FAKE_EXIT_CODE", "3"))
	ok := testPod("onfailure-ok", withPolicy(v1.RestartPolicyOnFailure), withEnv("FAKE_EXIT_AFTER", "10ms"))
	h.pipe.Upsert(never)
	h.pipe.Upsert(ok)
	st := h.waitFor(never.UID, "Failed", func(st v1.PodStatus) bool { return st.Phase == v1.PodFailed })
	if term := st.ContainerStatuses[0].State.Terminated; term == nil || term.ExitCode != 3 || term.Reason != "Error" {
		t.Fatalf("terminated = %+v", st.ContainerStatuses[0].State)
	}
	h.waitFor(ok.UID, "Succeeded", func(st v1.PodStatus) bool { return st.Phase == v1.PodSucceeded })
	// A finished pod's sandbox is stopped, not removed.
	deadline := time.Now().Add(5 * time.Second)
	for {
		sbs, err := h.rt.ListPodSandbox(context.Background(), &runtimeapi.PodSandboxFilter{
			LabelSelector: map[string]string{cri.LabelPodUID: string(never.UID)}})
		if err != nil {
			t.Fatal(err)
		}
		if len(sbs) == 1 && sbs[0].State == runtimeapi.PodSandboxState_SANDBOX_NOTREADY {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("sandbox of a finished pod: %v", sbs)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if n, _ := h.admitter.Admitted(); n != 0 {
		t.Fatalf("finished pods still hold admission: %d", n)
	}
}

func TestInitContainersRunFirst(t *testing.T) { eachQueue(t, testInitContainersRunFirst) }

func testInitContainersRunFirst(t *testing.T, q stages.QueueKind) {
	h := newHarness(t, harnessOpts{queue: q})
	pod := testPod("init", func(p *v1.Pod) {
		p.Spec.InitContainers = []v1.Container{{
			Name: "setup", Image: "busybox:1.36", ImagePullPolicy: v1.PullIfNotPresent,
			Env: []v1.EnvVar{{Name: "FAKE_EXIT_AFTER", Value: "30ms"}},
		}}
	})
	h.pipe.Upsert(pod)
	st := h.waitFor(pod.UID, "initializing", func(st v1.PodStatus) bool {
		return st.InitContainerStatuses[0].State.Running != nil
	})
	if w := st.ContainerStatuses[0].State.Waiting; w == nil || w.Reason != "PodInitializing" {
		t.Fatalf("app container while init runs: %+v", st.ContainerStatuses[0].State)
	}
	st = h.waitRunning(pod.UID)
	init := st.InitContainerStatuses[0].State.Terminated
	app := st.ContainerStatuses[0].State.Running
	if init == nil || init.ExitCode != 0 || app.StartedAt.Before(&init.FinishedAt) {
		t.Fatalf("init %+v must finish before app %+v starts", init, app)
	}
}

func TestAdmissionRejects(t *testing.T) { eachQueue(t, testAdmissionRejects) }

func testAdmissionRejects(t *testing.T, q stages.QueueKind) {
	h := newHarness(t, harnessOpts{queue: q, maxPods: 1})
	a := testPod("first")
	h.pipe.Upsert(a)
	h.waitRunning(a.UID)
	b := testPod("second")
	h.pipe.Upsert(b)
	st := h.waitFor(b.UID, "rejected", func(st v1.PodStatus) bool { return st.Phase == v1.PodFailed })
	if st.Reason != "OutOfpods" {
		t.Fatalf("reason = %q, want OutOfpods (%s)", st.Reason, st.Message)
	}
	big := testPod("big", func(p *v1.Pod) {
		p.Spec.Containers[0].Resources.Requests[v1.ResourceCPU] = resource.MustParse("64")
	})
	h.pipe.Remove(a.UID)
	h.waitGone(a.UID)
	h.pipe.Upsert(big)
	st = h.waitFor(big.UID, "rejected", func(st v1.PodStatus) bool { return st.Phase == v1.PodFailed })
	if st.Reason != "OutOfcpu" {
		t.Fatalf("reason = %q, want OutOfcpu", st.Reason)
	}
	if n := h.fake.Calls("RunPodSandbox"); n != 1 {
		t.Fatalf("rejected pods reached the runtime: %d sandboxes", n)
	}
}

func TestSpecChangeRestartsContainer(t *testing.T) { eachQueue(t, testSpecChangeRestartsContainer) }

func testSpecChangeRestartsContainer(t *testing.T, q stages.QueueKind) {
	h := newHarness(t, harnessOpts{queue: q})
	pod := testPod("change")
	h.pipe.Upsert(pod)
	first := h.waitRunning(pod.UID).ContainerStatuses[0].ContainerID
	updated := pod.DeepCopy()
	updated.Spec.Containers[0].Image = "busybox:1.37"
	h.pipe.Upsert(updated)
	st := h.waitFor(pod.UID, "restarted", func(st v1.PodStatus) bool {
		cs := st.ContainerStatuses[0]
		return cs.ContainerID != first && cs.State.Running != nil
	})
	if st.ContainerStatuses[0].RestartCount != 1 {
		t.Fatalf("restartCount = %d", st.ContainerStatuses[0].RestartCount)
	}
	if n := h.fake.Calls("RunPodSandbox"); n != 1 {
		t.Fatalf("a container spec change made a new sandbox")
	}
}

func TestRestartAdoptsRunningPods(t *testing.T) { eachQueue(t, testRestartAdoptsRunningPods) }

func testRestartAdoptsRunningPods(t *testing.T, q stages.QueueKind) {
	sock, srv := fake.Listen(t, fake.Options{})
	h1 := newHarness(t, harnessOpts{queue: q, socket: sock, srv: srv})
	pod := testPod("adopt")
	h1.pipe.Upsert(pod)
	id := h1.waitRunning(pod.UID).ContainerStatuses[0].ContainerID
	h1.stop()

	h2 := newHarness(t, harnessOpts{queue: q, socket: sock, srv: srv, node: h1.node})
	h2.pipe.Upsert(pod)
	st := h2.waitRunning(pod.UID)
	if got := st.ContainerStatuses[0].ContainerID; got != id {
		t.Fatalf("container after restart = %s, want the adopted %s", got, id)
	}
	if n := srv.Calls("RunPodSandbox"); n != 1 {
		t.Fatalf("RunPodSandbox called %d times across a restart, want 1", n)
	}
	if n := srv.Calls("CreateContainer"); n != 1 {
		t.Fatalf("CreateContainer called %d times across a restart, want 1", n)
	}
}

func TestOrphansAreTornDown(t *testing.T) { eachQueue(t, testOrphansAreTornDown) }

func testOrphansAreTornDown(t *testing.T, q stages.QueueKind) {
	sock, srv := fake.Listen(t, fake.Options{})
	h1 := newHarness(t, harnessOpts{queue: q, socket: sock, srv: srv})
	gone := testPod("gone")
	h1.pipe.Upsert(gone)
	h1.waitRunning(gone.UID)
	h1.stop()

	// The pod's manifest disappeared while podline was down.
	h2 := newHarness(t, harnessOpts{queue: q, socket: sock, srv: srv, node: h1.node})
	h2.pipe.SourcesReady()
	h2.waitGone(gone.UID)
}

func TestWindowBackpressure(t *testing.T) { eachQueue(t, testWindowBackpressure) }

func testWindowBackpressure(t *testing.T, q stages.QueueKind) {
	h := newHarness(t, harnessOpts{queue: q, window: 4, fake: fake.Options{DefaultLatency: 2 * time.Millisecond}})
	var uids []types.UID
	for i := range 40 {
		p := testPod(fmt.Sprintf("p%02d", i))
		h.pipe.Upsert(p) // parks while 4 passes are in flight
		uids = append(uids, p.UID)
	}
	for _, uid := range uids {
		h.waitRunning(uid)
	}
	if n := h.fake.Calls("RunPodSandbox"); n != 40 {
		t.Fatalf("RunPodSandbox called %d times, want 40", n)
	}
}

func TestUpdatesCoalesce(t *testing.T) { eachQueue(t, testUpdatesCoalesce) }

func testUpdatesCoalesce(t *testing.T, q stages.QueueKind) {
	h := newHarness(t, harnessOpts{queue: q, fake: fake.Options{Latency: map[string]time.Duration{"RunPodSandbox": 100 * time.Millisecond}}})
	pod := testPod("burst")
	h.pipe.Upsert(pod)
	var last string
	for i := range 50 {
		p := pod.DeepCopy()
		last = fmt.Sprintf("v%d", i)
		p.Labels = map[string]string{"version": last}
		h.pipe.Upsert(p)
	}
	h.waitRunning(pod.UID)
	deadline := time.Now().Add(5 * time.Second)
	for h.pipe.Len() > 0 && !h.pipe.Idle() && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	pods := h.store.Pods()
	if len(pods) != 1 || pods[0].Labels["version"] != last {
		t.Fatalf("published pod labels = %v, want the latest version %s", pods[0].Labels, last)
	}
	if n := h.fake.Calls("RunPodSandbox"); n != 1 {
		t.Fatalf("coalesced updates made %d sandboxes", n)
	}
}

// podline killed between CreateContainer and StartContainer leaves a
// container that was created but never started. The next podline starts
// the pod all the same, in the sandbox it finds, with a restart count of
// 0: stopping that container, as it once did, left it created, and the
// pod never started.
func TestRestartAfterCreateBeforeStart(t *testing.T) { eachQueue(t, testRestartAfterCreateBeforeStart) }

func testRestartAfterCreateBeforeStart(t *testing.T, q stages.QueueKind) {
	sock, srv := fake.Listen(t, fake.Options{})
	srv.Inject("StartContainer", codes.Unavailable, 1000)
	h1 := newHarness(t, harnessOpts{queue: q, socket: sock, srv: srv})
	pod := testPod("half")
	h1.pipe.Upsert(pod)
	for deadline := time.Now().Add(10 * time.Second); srv.Calls("StartContainer") == 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("podline never tried to start the container")
		}
	}
	h1.stop()
	srv.ClearFaults()

	h2 := newHarness(t, harnessOpts{queue: q, socket: sock, srv: srv, node: h1.node})
	h2.pipe.Upsert(pod)
	st := h2.waitRunning(pod.UID)
	if rc := st.ContainerStatuses[0].RestartCount; rc != 0 {
		t.Errorf("restart count %d, want 0: the container never ran before", rc)
	}
	if n := srv.Calls("RunPodSandbox"); n != 1 {
		t.Errorf("RunPodSandbox called %d times, want 1: the sandbox is kept", n)
	}
	ctrs, err := h2.rt.ListContainers(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(ctrs) != 1 || ctrs[0].State != runtimeapi.ContainerState_CONTAINER_RUNNING {
		t.Errorf("runtime holds %d containers (%v), want the one running", len(ctrs), ctrs)
	}
}
