package stages_test

import (
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/podline/podline/cgroupfs"
	"github.com/podline/podline/cri/fake"
	"github.com/podline/podline/stages"
)

// arrive hands the pipeline pods a source added together, as podline's
// dispatcher does: admission decides them first, then their passes start.
func (h *harness) arrive(pods ...*v1.Pod) {
	h.admitter.Arrived(pods)
	for _, p := range pods {
		h.pipe.Upsert(p)
	}
}

// TestRestartKeepsRunningPodsAdmitted restarts podline on a node whose
// pods came to need more than it has: two ran before the restart, a third
// was added while podline was down. The sources deliver all three at once,
// the newcomer first (the merger lists by name). The two that ran are
// admitted and adopted; the newcomer is the one refused.
func TestRestartKeepsRunningPodsAdmitted(t *testing.T) {
	created := func(min int) func(*v1.Pod) {
		return func(p *v1.Pod) {
			p.CreationTimestamp = metav1.NewTime(time.Unix(1e9, 0).Add(time.Duration(min) * time.Minute))
		}
	}
	static := func(p *v1.Pod) { p.Annotations = map[string]string{"kubernetes.io/config.source": "file"} }
	t.Run("api", func(t *testing.T) { testRestartKeepsRunningPods(t, created(1), created(2), created(3)) })
	// Static pods have no creation time; the runtime knows which ran.
	t.Run("static", func(t *testing.T) { testRestartKeepsRunningPods(t, static, static, static) })
}

func testRestartKeepsRunningPods(t *testing.T, first, second, newcomer func(*v1.Pod)) {
	sock, srv := fake.Listen(t, fake.Options{})
	node := &stages.Node{
		Name: "node-a", IPs: []string{"192.0.2.10"}, CPUMilli: 1000, MemoryBytes: 8 << 30,
		RootDir: t.TempDir(), LogsDir: t.TempDir(), Cgroups: cgroupfs.Layout{Root: "/", PerQOS: true},
	}
	cpu := func(p *v1.Pod) { p.Spec.Containers[0].Resources.Requests[v1.ResourceCPU] = resource.MustParse("400m") }
	a, b := testPod("b-first", cpu, first), testPod("c-second", cpu, second)
	c := testPod("a-newest", cpu, newcomer)

	h1 := newHarness(t, harnessOpts{socket: sock, srv: srv, node: node})
	h1.admitter.Cache = h1.cache
	h1.arrive(a, b)
	ids := map[string]string{}
	for _, p := range []*v1.Pod{a, b} {
		ids[p.Name] = h1.waitRunning(p.UID).ContainerStatuses[0].ContainerID
	}
	h1.stop()

	h2 := newHarness(t, harnessOpts{socket: sock, srv: srv, node: node})
	h2.admitter.Cache = h2.cache
	h2.arrive(c, a, b)
	for _, p := range []*v1.Pod{a, b} {
		st := h2.waitRunning(p.UID)
		if got := st.ContainerStatuses[0].ContainerID; got != ids[p.Name] {
			t.Errorf("%s runs container %s after the restart, want the adopted %s", p.Name, got, ids[p.Name])
		}
	}
	st := h2.waitFor(c.UID, "Failed", func(st v1.PodStatus) bool { return st.Phase == v1.PodFailed })
	if want := "Node didn't have enough resource: cpu, requested: 400, used: 800, capacity: 1000"; st.Reason != "OutOfcpu" || st.Message != want {
		t.Errorf("newcomer: reason %q, message %q; want OutOfcpu, %q", st.Reason, st.Message, want)
	}
	if n, used := h2.admitter.Admitted(); n != 2 || used.CPUMilli != 800 {
		t.Errorf("admitted %d pods using %dm, want the two that ran, 800m", n, used.CPUMilli)
	}
	if n := srv.Calls("RunPodSandbox"); n != 2 {
		t.Errorf("RunPodSandbox called %d times, want 2 (before the restart only)", n)
	}
}
