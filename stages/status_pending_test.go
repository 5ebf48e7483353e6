package stages_test

import (
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/podline/podline/cri/fake"
)

// A pod is published from its admission on, Pending with its container
// ContainerCreating, while its first pass is still stuck in the runtime
// (an image pull or a volume can hold it for minutes); the kubelet's /pods
// shows it too. A graceful deletion shows in the store as soon as a source
// delivers it, before the pass it starts has stopped anything.
func TestPodPublishedWhileItStarts(t *testing.T) {
	h := newHarness(t, harnessOpts{requestTimeout: time.Minute,
		fake: fake.Options{Hangs: []fake.Hang{{Method: "RunPodSandbox", Name: "stuck"}}}})
	pod := testPod("stuck")
	h.pipe.Upsert(pod)
	for deadline := time.Now().Add(10 * time.Second); h.fake.HungCalls() == 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the pod's sandbox call never reached the runtime")
		}
	}
	_, st, _, ok := h.store.Get(pod.UID)
	if !ok {
		t.Fatal("the pod is not published while its sandbox is being made")
	}
	if st.Phase != v1.PodPending || len(st.ContainerStatuses) != 1 {
		t.Fatalf("status = phase %q, %d container statuses; want Pending with one", st.Phase, len(st.ContainerStatuses))
	}
	if w := st.ContainerStatuses[0].State.Waiting; w == nil || w.Reason != "ContainerCreating" {
		t.Fatalf("container state = %+v, want waiting ContainerCreating", st.ContainerStatuses[0].State)
	}

	deleting := pod.DeepCopy()
	now := metav1.Now()
	deleting.DeletionTimestamp = &now
	_, _, before, _ := h.store.Get(pod.UID)
	h.store.Refresh(deleting)
	got, kept, after, _ := h.store.Get(pod.UID)
	if got.DeletionTimestamp == nil || after <= before {
		t.Fatalf("after Refresh: deletion timestamp %v, version %d → %d; want the deleting pod, a newer version", got.DeletionTimestamp, before, after)
	}
	if kept.Phase != st.Phase || kept.ContainerStatuses[0].State.Waiting == nil {
		t.Fatalf("Refresh changed the status: %+v", kept)
	}
}
