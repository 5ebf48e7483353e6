package stages_test

import (
	"testing"
	"time"

	"google.golang.org/grpc/codes"
)

// A pod whose pass failed because the runtime was unavailable starts as
// soon as the runtime answers again (RuntimeBack), not at the end of its
// back-off, here made an hour long; a pod held back by another error keeps
// its back-off.
func TestRuntimeBackEndsTheBackoffOfAnUnavailableRuntime(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	heldBy := func(name string, code codes.Code) {
		t.Helper()
		h.fake.Inject("RunPodSandbox", code, -1)
		pod := testPod(name)
		h.pipe.Upsert(pod)
		for deadline := time.Now().Add(10 * time.Second); !h.pipe.HoldFor(pod.UID, time.Hour); time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%s: no failed pass", name)
			}
		}
		h.fake.ClearFaults()
	}
	heldBy("down", codes.Unavailable)
	heldBy("broken", codes.Internal)

	h.pipe.RuntimeBack()
	h.waitRunning(testPod("down").UID)
	if !h.pipe.Held(testPod("broken").UID) {
		t.Fatal("a pod that failed for another reason lost its back-off")
	}
}
