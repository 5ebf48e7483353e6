package stages

import (
	"testing"

	v1 "k8s.io/api/core/v1"
)

// The status says which generation of the spec it was computed from, and
// so does every condition it sets; a pod without a generation (a static
// pod read from a file) leaves both unset, as the kubelet does.
func TestPodStatusObservedGeneration(t *testing.T) {
	sb := sbList(rtReady("sb1", 1))
	running := rtPod(sb, rtRunning("app1", "sb1", "app", 0))
	for _, gen := range []int64{0, 1, 7} {
		pod := unitPod(func(p *v1.Pod) { p.Generation = gen })
		st := computeStatus(pod, running, nil, nil)
		if st.ObservedGeneration != gen {
			t.Errorf("generation %d: status observedGeneration %d", gen, st.ObservedGeneration)
		}
		if len(st.Conditions) != 5 {
			t.Fatalf("generation %d: %d conditions, want the five the node sets", gen, len(st.Conditions))
		}
		for _, c := range st.Conditions {
			if c.ObservedGeneration != gen {
				t.Errorf("generation %d: condition %s observedGeneration %d", gen, c.Type, c.ObservedGeneration)
			}
		}
	}

	// A rejected pod's status says it too.
	pod := unitPod(func(p *v1.Pod) { p.Generation = 2 })
	st := PodStatus(StatusInput{Pod: pod, Node: statusNode, RuntimeName: "containerd", Now: statusNow,
		Sync: &PodSync{FirstSeen: baseTime, Rejection: &Rejection{Reason: "OutOfcpu"}}})
	if st.ObservedGeneration != 2 || st.Conditions[0].ObservedGeneration != 2 {
		t.Errorf("rejected pod: observedGeneration %d, condition's %d, want 2", st.ObservedGeneration, st.Conditions[0].ObservedGeneration)
	}

	// A new generation changes the status even when nothing else did, so
	// that it is published; the conditions keep their transition times.
	pod1 := unitPod(func(p *v1.Pod) { p.Generation = 1 })
	pod2 := unitPod(func(p *v1.Pod) { p.Generation = 2 })
	first := computeStatus(pod1, running, nil, nil)
	second := computeStatus(pod2, running, nil, &first)
	for i := range second.Conditions {
		if !second.Conditions[i].LastTransitionTime.Equal(&first.Conditions[i].LastTransitionTime) {
			t.Errorf("condition %s moved its transition time with the generation", second.Conditions[i].Type)
		}
	}
	if asJSON(first) == asJSON(second) {
		t.Error("a new generation left the status unchanged")
	}
}
