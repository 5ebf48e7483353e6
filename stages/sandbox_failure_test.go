package stages_test

import (
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
