package stages_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	v1 "k8s.io/api/core/v1"

	"github.com/podline/podline/cri/fake"
	"github.com/podline/podline/stages"
)

func sandboxCondition(st v1.PodStatus) *v1.PodCondition {
	for i := range st.Conditions {
		if st.Conditions[i].Type == v1.PodReadyToStartContainers {
			return &st.Conditions[i]
		}
	}
	return nil
}

// A pod whose sandbox the runtime cannot make says why in its status, not
// only in an event; the reason goes once a sandbox is made.
func TestSandboxFailureInStatus(t *testing.T) {
	h := newHarness(t, harnessOpts{fake: fake.Options{}})
	h.fake.Inject("RunPodSandbox", codes.DeadlineExceeded, 1000)
	pod := testPod("stuck")
	h.pipe.Upsert(pod)
	st := h.waitFor(pod.UID, "a sandbox failure in its status", func(st v1.PodStatus) bool {
		c := sandboxCondition(st)
		return c != nil && c.Reason == stages.ReasonFailedCreatePodSandBox
	})
	c := sandboxCondition(st)
	if c.Status != v1.ConditionFalse || !strings.Contains(c.Message, "Failed to create pod sandbox") || !strings.Contains(c.Message, "DeadlineExceeded") {
		t.Fatalf("PodReadyToStartContainers = %+v, want False naming the failed call", c)
	}
	if st.Phase != v1.PodPending {
		t.Errorf("phase %s, want Pending", st.Phase)
	}
	h.fake.ClearFaults()
	st = h.waitRunning(pod.UID)
	if c := sandboxCondition(st); c == nil || c.Status != v1.ConditionTrue || c.Reason != "" || c.Message != "" {
		t.Errorf("after the sandbox was made: %+v, want True without a reason", c)
	}
}

// A volume that cannot mount (here a hostPath Directory that is missing;
// on a node, a full disk) says so in the pod's status; the reason goes
// once the volume mounts.
func TestVolumeFailureInStatus(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	dir := filepath.Join(t.TempDir(), "data")
	typ := v1.HostPathDirectory
	pod := testPod("mountless", func(p *v1.Pod) {
		p.Spec.Volumes = []v1.Volume{{Name: "data", VolumeSource: v1.VolumeSource{HostPath: &v1.HostPathVolumeSource{Path: dir, Type: &typ}}}}
	})
	h.pipe.Upsert(pod)
	st := h.waitFor(pod.UID, "a mount failure in its status", func(st v1.PodStatus) bool {
		c := sandboxCondition(st)
		return c != nil && c.Reason == "FailedMount"
	})
	if c := sandboxCondition(st); c.Status != v1.ConditionFalse || !strings.Contains(c.Message, `volume "data"`) {
		t.Fatalf("PodReadyToStartContainers = %+v, want False naming the volume", c)
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	st = h.waitRunning(pod.UID)
	if c := sandboxCondition(st); c == nil || c.Status != v1.ConditionTrue || c.Reason != "" {
		t.Errorf("after the mount: %+v, want True without a reason", c)
	}
}
