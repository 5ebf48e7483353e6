package podstatus

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
)

// applyPatch does what the API server does with a status patch.
func applyPatch(t *testing.T, api v1.PodStatus, patch []byte) v1.PodStatus {
	t.Helper()
	old, err := json.Marshal(v1.Pod{Status: api})
	if err != nil {
		t.Fatal(err)
	}
	out, err := strategicpatch.StrategicMergePatch(old, patch, v1.Pod{})
	if err != nil {
		t.Fatalf("apply %s: %v", patch, err)
	}
	var p v1.Pod
	if err := json.Unmarshal(out, &p); err != nil {
		t.Fatal(err)
	}
	return p.Status
}

// roundTrip is a status as the API server stores it (second precision).
func roundTrip(t *testing.T, st v1.PodStatus) v1.PodStatus {
	t.Helper()
	return applyPatch(t, st, []byte("{}"))
}

func TestStatusPatch(t *testing.T) {
	at := time.Date(2026, 11, 21, 10, 0, 0, 123456789, time.UTC)
	f := func(name string, api, next v1.PodStatus, wantNil bool) {
		t.Helper()
		patch, err := statusPatch("u1", "", &api, &next)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if wantNil {
			if patch != nil {
				t.Fatalf("%s: want no patch, got %s", name, patch)
			}
			return
		}
		if patch == nil {
			t.Fatalf("%s: want a patch, got none", name)
		}
		var meta struct {
			Metadata map[string]any `json:"metadata"`
		}
		if err := json.Unmarshal(patch, &meta); err != nil {
			t.Fatalf("%s: patch is not JSON: %s", name, patch)
		}
		if len(meta.Metadata) != 1 || meta.Metadata["uid"] != "u1" {
			t.Fatalf("%s: metadata of patch = %v, want only uid u1", name, meta.Metadata)
		}
		got := applyPatch(t, api, patch)
		if want := roundTrip(t, next); !equality.Semantic.DeepEqual(got, want) {
			t.Fatalf("%s: patched status\n got %+v\nwant %+v", name, got, want)
		}
	}
	running := podStatus(v1.PodRunning, true, at)
	pending := podStatus(v1.PodPending, false, at)

	f("same status", running, running, true)
	f("stored with second precision", roundTrip(t, running), running, true)
	f("empty to running", v1.PodStatus{}, running, false)
	f("pending to running", roundTrip(t, pending), running, false)

	withResize := roundTrip(t, running)
	withResize.Conditions = append(withResize.Conditions, v1.PodCondition{Type: v1.PodResizePending, Status: v1.ConditionTrue})
	f("a condition we no longer set is removed", withResize, running, false)

	moved := running
	moved.PodIPs = []v1.PodIP{{IP: "10.1.0.7"}}
	withIP := roundTrip(t, running)
	withIP.PodIPs = []v1.PodIP{{IP: "10.1.0.5"}}
	f("a changed pod IP replaces the old one", withIP, moved, false)
}

func TestStatusPatchResourceVersionPrecondition(t *testing.T) {
	running := podStatus(v1.PodRunning, true, time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC))
	patch, err := statusPatch("u1", "42", &v1.PodStatus{}, &running)
	if err != nil {
		t.Fatal(err)
	}
	var meta struct {
		Metadata map[string]any `json:"metadata"`
	}
	if err := json.Unmarshal(patch, &meta); err != nil {
		t.Fatalf("patch is not JSON: %s", patch)
	}
	if len(meta.Metadata) != 2 || meta.Metadata["uid"] != "u1" || meta.Metadata["resourceVersion"] != "42" {
		t.Fatalf("metadata of patch = %v, want uid u1 and resourceVersion 42", meta.Metadata)
	}
	if got, want := applyPatch(t, v1.PodStatus{}, patch), roundTrip(t, running); !equality.Semantic.DeepEqual(got, want) {
		t.Fatalf("patched status\n got %+v\nwant %+v", got, want)
	}
	if patch, err := statusPatch("u1", "42", &running, &running); err != nil || patch != nil {
		t.Fatalf("unchanged status: patch %s, err %v; want none", patch, err)
	}
}

func TestMergeStatusKeepsOthersFields(t *testing.T) {
	at := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	api := podStatus(v1.PodPending, false, at.Add(-time.Minute))
	api.NominatedNodeName = "node1"
	api.Conditions = append(api.Conditions,
		v1.PodCondition{Type: "example.com/lb", Status: v1.ConditionTrue},
		v1.PodCondition{Type: v1.DisruptionTarget, Status: v1.ConditionTrue, Reason: "PreemptionByScheduler"},
		v1.PodCondition{Type: v1.PodResizePending, Status: v1.ConditionTrue},
	)
	ours := podStatus(v1.PodRunning, true, at)
	got := mergeStatus(apiPod("p", "u"), &api, ours, at).status

	if got.NominatedNodeName != "node1" {
		t.Errorf("nominatedNodeName = %q, want the scheduler's node1", got.NominatedNodeName)
	}
	f := func(ct v1.PodConditionType, want v1.ConditionStatus) {
		t.Helper()
		c := condition(got, ct)
		switch {
		case c == nil && want != "":
			t.Errorf("condition %s missing, want %s", ct, want)
		case c != nil && want == "":
			t.Errorf("condition %s = %s, want it gone", ct, c.Status)
		case c != nil && c.Status != want:
			t.Errorf("condition %s = %s, want %s", ct, c.Status, want)
		}
	}
	f("example.com/lb", v1.ConditionTrue)
	f(v1.DisruptionTarget, v1.ConditionTrue)
	f(v1.PodReady, v1.ConditionTrue) // ours, not the API's False
	f(v1.PodResizePending, "")       // owned by the node, not set by us any more
	if got.Phase != v1.PodRunning || len(got.ContainerStatuses) != 1 || got.ContainerStatuses[0].State.Running == nil {
		t.Errorf("merged status lost our fields: %+v", got)
	}
	if c := condition(ours, "example.com/lb"); c != nil {
		t.Errorf("merge modified its input: %+v", ours.Conditions)
	}
}

func TestReadinessGates(t *testing.T) {
	at := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	earlier := metav1.NewTime(at.Add(-time.Hour))
	pod := apiPod("p", "u")
	pod.Spec.ReadinessGates = []v1.PodReadinessGate{{ConditionType: "example.com/lb"}, {ConditionType: "example.com/dns"}}
	f := func(name string, ours v1.PodStatus, apiConds []v1.PodCondition, wantReady v1.ConditionStatus, wantGated bool, wantMsg string) {
		t.Helper()
		api := v1.PodStatus{Conditions: apiConds}
		got := mergeStatus(pod, &api, ours, at)
		c := condition(got.status, v1.PodReady)
		if c.Status != wantReady || got.gated != wantGated {
			t.Fatalf("%s: Ready=%s gated=%v, want %s %v", name, c.Status, got.gated, wantReady, wantGated)
		}
		if !strings.Contains(c.Message, wantMsg) {
			t.Fatalf("%s: message %q does not say %q", name, c.Message, wantMsg)
		}
		if wantGated && c.Reason != "ReadinessGatesNotReady" {
			t.Fatalf("%s: reason %q", name, c.Reason)
		}
		if cr := condition(got.status, v1.ContainersReady); cr.Status != condition(ours, v1.ContainersReady).Status {
			t.Fatalf("%s: gates must not touch ContainersReady", name)
		}
	}
	lb := func(s v1.ConditionStatus) v1.PodCondition { return v1.PodCondition{Type: "example.com/lb", Status: s} }
	dns := func(s v1.ConditionStatus) v1.PodCondition { return v1.PodCondition{Type: "example.com/dns", Status: s} }
	ready := podStatus(v1.PodRunning, true, at)

	f("no gate condition yet", ready, nil, v1.ConditionFalse, true, `"example.com/lb" does not exist`)
	f("one gate false", ready, []v1.PodCondition{lb(v1.ConditionTrue), dns(v1.ConditionFalse)}, v1.ConditionFalse, true, `"example.com/dns" is not "True", but False`)
	f("all gates true", ready, []v1.PodCondition{lb(v1.ConditionTrue), dns(v1.ConditionTrue)}, v1.ConditionTrue, false, "")
	f("containers not ready", podStatus(v1.PodRunning, false, at), nil, v1.ConditionFalse, false, "")

	// A Ready the API object already has as false keeps its transition
	// time, so an unchanged gate yields no patch.
	api := v1.PodStatus{Conditions: []v1.PodCondition{{Type: v1.PodReady, Status: v1.ConditionFalse, LastTransitionTime: earlier}}}
	got := mergeStatus(pod, &api, ready, at)
	if c := condition(got.status, v1.PodReady); !c.LastTransitionTime.Equal(&earlier) {
		t.Fatalf("Ready transition time = %v, want the API's %v", c.LastTransitionTime, earlier)
	}
}

func BenchmarkMergeAndPatch(b *testing.B) {
	at := time.Date(2026, 11, 21, 10, 0, 0, 123456789, time.UTC)
	pod := apiPod("p", "u")
	api := podStatus(v1.PodPending, false, at.Add(-time.Minute))
	ours := podStatus(v1.PodRunning, true, at)
	b.ReportAllocs()
	for b.Loop() {
		next := mergeStatus(pod, &api, ours, at)
		if p, err := statusPatch("u", "", &api, &next.status); err != nil || p == nil {
			b.Fatal(p, err)
		}
	}
}
