package stages_test

import (
	"fmt"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/podline/podline/cri/fake"
	"github.com/podline/podline/stages"
)

// The start gate holds the starts in the sandbox and containers stages to
// its limit, with 8 workers in each, and every pod still starts; deleting
// pods that wait at the gate tears them down without waiting their turn.
func TestStartGateBoundsStartsInThePipeline(t *testing.T) {
	eachQueue(t, func(t *testing.T, q stages.QueueKind) {
		gate := stages.NewFixedStartGate(3)
		h := newHarness(t, harnessOpts{queue: q, starts: gate, window: 128,
			fake: fake.Options{Latency: map[string]time.Duration{"RunPodSandbox": 5 * time.Millisecond, "StartContainer": 5 * time.Millisecond}}})
		for i := range 30 {
			h.pipe.Upsert(testPod(fmt.Sprintf("p%02d", i)))
		}
		for i := range 30 {
			h.waitRunning(testPod(fmt.Sprintf("p%02d", i)).UID)
		}
		if got := gate.MostStarts(); got != 3 {
			t.Fatalf("at most %d starts at once, want the limit, 3", got)
		}

		// A runtime that takes 3 s per sandbox: one start holds the only
		// place while the others wait; they are deleted meanwhile.
		slow := stages.NewFixedStartGate(1)
		h2 := newHarness(t, harnessOpts{queue: q, starts: slow, window: 128,
			fake: fake.Options{Latency: map[string]time.Duration{"RunPodSandbox": 3 * time.Second}}})
		first := testPod("first")
		h2.pipe.Upsert(first)
		var waiting []*v1.Pod
		for i := range 5 {
			p := testPod(fmt.Sprintf("w%d", i))
			h2.pipe.Upsert(p)
			waiting = append(waiting, p)
		}
		for _, p := range waiting {
			h2.pipe.Remove(p.UID)
		}
		for _, p := range waiting {
			h2.waitGone(p.UID)
		}
		// Gone while the start ahead of them still holds the place.
		if st, _, ok := h2.store.Status(first.UID); ok && st.Phase == v1.PodRunning {
			t.Fatal("the pods waiting at the gate went only after the start ahead of them had finished")
		}
		h2.waitRunning(first.UID)
	})
}

// A pod start asks for the sandbox's status only when it needs its
// address: a host-network pod's is the node's.
func TestSandboxStatusOnlyForPodNetwork(t *testing.T) {
	h := newHarness(t, harnessOpts{relist: time.Hour})
	host := testPod("host", func(p *v1.Pod) { p.Spec.HostNetwork = true })
	h.pipe.Upsert(host)
	if st := h.waitRunning(host.UID); len(st.PodIPs) != 1 || st.PodIPs[0].IP != "192.0.2.10" {
		t.Fatalf("host-network pod IPs = %v, want the node's", st.PodIPs)
	}
	if n := h.fake.Calls("PodSandboxStatus"); n != 0 {
		t.Fatalf("PodSandboxStatus called %d times for a host-network pod, want 0", n)
	}
	pod := testPod("pod")
	h.pipe.Upsert(pod)
	if st := h.waitRunning(pod.UID); st.PodIP == "" {
		t.Fatal("a pod-network pod has no IP")
	}
	if n := h.fake.Calls("PodSandboxStatus"); n != 1 {
		t.Fatalf("PodSandboxStatus called %d times for one pod-network pod, want 1", n)
	}
}
