package stages_test

import (
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/podline/podline/stages"
)

// withSidecar puts a sidecar "proxy" (runs until stopped) and an
// ordinary init container "setup" (exits 0 after 30ms) before the app.
func withSidecar(p *v1.Pod) {
	always := v1.ContainerRestartPolicyAlways
	p.Spec.InitContainers = []v1.Container{
		{Name: "proxy", Image: "busybox:1.36", ImagePullPolicy: v1.PullIfNotPresent, RestartPolicy: &always},
		{Name: "setup", Image: "busybox:1.36", ImagePullPolicy: v1.PullIfNotPresent,
			Env: []v1.EnvVar{{Name: "FAKE_EXIT_AFTER", Value: "30ms"}}},
	}
}

// A job-like pod with a sidecar: the sidecar starts first and does not
// hold back the init container after it nor the app; when the app exits
// 0 the sidecar is stopped and the pod Succeeded, whatever the sidecar's
// stop made its exit code.
func TestSidecarJobCompletes(t *testing.T) { eachQueue(t, testSidecarJobCompletes) }

func testSidecarJobCompletes(t *testing.T, q stages.QueueKind) {
	h := newHarness(t, harnessOpts{queue: q})
	pod := testPod("job", withPolicy(v1.RestartPolicyNever), withSidecar, withEnv("FAKE_EXIT_AFTER", "150ms"))
	h.pipe.Upsert(pod)
	st := h.waitFor(pod.UID, "Succeeded", func(st v1.PodStatus) bool { return st.Phase == v1.PodSucceeded })
	proxy, setup, app := st.InitContainerStatuses[0], st.InitContainerStatuses[1], st.ContainerStatuses[0]
	pt, stt, at := proxy.State.Terminated, setup.State.Terminated, app.State.Terminated
	if pt == nil || stt == nil || at == nil {
		t.Fatalf("every container terminated: proxy %+v, setup %+v, app %+v", proxy.State, setup.State, app.State)
	}
	if at.ExitCode != 0 || pt.ExitCode != 143 {
		t.Errorf("app exited %d, proxy %d: want 0 and the stop's 143", at.ExitCode, pt.ExitCode)
	}
	if proxy.RestartCount != 0 {
		t.Errorf("proxy restarted %d times, want none: it was stopped, not crashed", proxy.RestartCount)
	}
	if stt.StartedAt.Before(&pt.StartedAt) || at.StartedAt.Before(&stt.FinishedAt) {
		t.Errorf("order: proxy started %s, setup %s-%s, app started %s", pt.StartedAt, stt.StartedAt, stt.FinishedAt, at.StartedAt)
	}
	if pt.FinishedAt.Before(&at.FinishedAt) {
		t.Errorf("proxy stopped at %s, before the app finished at %s", pt.FinishedAt, at.FinishedAt)
	}
}

// A sidecar that crashes beside the running app is restarted, in a pod
// that never restarts its app containers too; the app is left alone.
func TestSidecarRestartsBesideApp(t *testing.T) { eachQueue(t, testSidecarRestartsBesideApp) }

func testSidecarRestartsBesideApp(t *testing.T, q stages.QueueKind) {
	h := newHarness(t, harnessOpts{queue: q})
	pod := testPod("svc", withPolicy(v1.RestartPolicyNever), withSidecar, func(p *v1.Pod) {
		p.Spec.InitContainers[0].Env = []v1.EnvVar{{Name: "FAKE_EXIT_AFTER", Value: "300ms"}, {Name: "FAKE_EXIT_CODE", Value: "1"}}
	})
	h.pipe.Upsert(pod)
	h.waitRunning(pod.UID)
	st := h.waitFor(pod.UID, "proxy restarted", func(st v1.PodStatus) bool {
		return st.InitContainerStatuses[0].RestartCount >= 1 && st.InitContainerStatuses[0].State.Running != nil
	})
	if st.Phase != v1.PodRunning {
		t.Errorf("phase %s while the proxy restarts, want Running", st.Phase)
	}
	if app := st.ContainerStatuses[0]; app.State.Running == nil || app.RestartCount != 0 {
		t.Errorf("app %+v (restarts %d), want running since the start", app.State, app.RestartCount)
	}
	if last := st.InitContainerStatuses[0].LastTerminationState.Terminated; last == nil || last.ExitCode != 1 {
		t.Errorf("proxy's last state %+v, want its exit 1", st.InitContainerStatuses[0].LastTerminationState)
	}
}
