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

		// A runtime stuck on one pod's sandbox: its start holds the only
		// place while the others wait; they are deleted meanwhile.
		slow := stages.NewFixedStartGate(1)
		h2 := newHarness(t, harnessOpts{queue: q, starts: slow, window: 128, requestTimeout: time.Minute,
			fake: fake.Options{Hangs: []fake.Hang{{Method: "RunPodSandbox", Name: "first"}}}})
		first := testPod("first")
		h2.pipe.Upsert(first)
		// The first start holds the place once its sandbox call is stuck
		// in the runtime (for the client's timeout, a minute; the gate
		// stops counting it after 10 s).
		for deadline := time.Now().Add(10 * time.Second); h2.fake.HungCalls() == 0; time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatal("the first pod's sandbox call never reached the runtime")
			}
		}
		var waiting []*v1.Pod
		for i := range 5 {
			p := testPod(fmt.Sprintf("w%d", i))
			h2.pipe.Upsert(p)
			waiting = append(waiting, p)
		}
		for deadline := time.Now().Add(10 * time.Second); slow.Parked() < len(waiting); time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%d passes wait at the gate, want %d", slow.Parked(), len(waiting))
			}
		}
		for _, p := range waiting {
			h2.pipe.Remove(p.UID)
		}
		// Gone while the start ahead of them still holds the place.
		for _, p := range waiting {
			h2.waitGone(p.UID)
		}
		// Still the one call, stuck: the place was never given up.
		if n := h2.fake.Calls("RunPodSandbox"); n != 1 {
			t.Fatalf("RunPodSandbox called %d times, want the first pod's stuck call only", n)
		}
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
