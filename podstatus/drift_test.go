package podstatus

import (
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
)

// markNotReady plays the node lifecycle controller's MarkPodsNotReady on
// the API object and the watch's copy of it: Ready false, resourceVersion
// rv. Nothing on the node changed.
func markNotReady(t *testing.T, e *env, w *watchCache, ns, name, rv string) {
	t.Helper()
	p, err := e.api.pod(ns, name)
	if err != nil {
		t.Fatal(err)
	}
	p = p.DeepCopy()
	p.ResourceVersion = rv
	c := condition(p.Status, v1.PodReady)
	c.Status, c.Reason = v1.ConditionFalse, "NodeNotReady"
	if err := e.api.Tracker().Update(podsGVR, p, ns); err != nil {
		t.Fatal(err)
	}
	w.put(p)
}

func TestResyncUndoesAnotherWriterOnOwnedFields(t *testing.T) {
	pod := apiPod("p1", "u1")
	obj := scheduled(pod, "7")
	e, w := startWatched(t, obj)
	w.put(obj)
	ok := patchesOK.Get()
	e.store.Set(pod, podStatus(v1.PodRunning, true, time.Now()))
	eventually(t, "status patched", func() bool { return patchesOK.Get() == ok+1 })

	markNotReady(t, e, w, "ns", "p1", "9")
	drifts := driftsFound.Get()
	e.m.resync()
	eventually(t, "Ready true again", func() bool {
		c := condition(e.apiStatus(t, "ns", "p1"), v1.PodReady)
		return c.Status == v1.ConditionTrue
	})
	if got := driftsFound.Get(); got != drifts+1 {
		t.Fatalf("drifts found %d, want %d", got, drifts+1)
	}
	patches := e.api.actions("patch")
	if uid, rv := patchMeta(t, patches[len(patches)-1]); uid != "u1" || rv != "9" {
		t.Fatalf("patch preconditions uid %q resourceVersion %q, want u1 and the watched 9", uid, rv)
	}
	if c := condition(e.apiStatus(t, "ns", "p1"), "example.com/lb"); c == nil || c.Status != v1.ConditionTrue {
		t.Fatal("a condition owned by someone else was lost")
	}
}

func TestResyncLeavesOthersFieldsAlone(t *testing.T) {
	pod := apiPod("p1", "u1")
	obj := scheduled(pod, "7")
	e, w := startWatched(t, obj)
	w.put(obj)
	ok := patchesOK.Get()
	e.store.Set(pod, podStatus(v1.PodRunning, true, time.Now()))
	eventually(t, "status patched", func() bool { return patchesOK.Get() == ok+1 })

	// A controller changed its own condition: the object moved on, and
	// nothing the node owns differs, so the resync sends nothing and the
	// next resync does not even compare again.
	p, _ := e.api.pod("ns", "p1")
	p = p.DeepCopy()
	p.ResourceVersion = "10"
	condition(p.Status, "example.com/lb").Status = v1.ConditionFalse
	w.put(p)
	drifts, compared := driftsFound.Get(), driftChecks.Get()
	e.m.resync()
	e.m.resync()
	if got := driftChecks.Get(); got != compared+1 {
		t.Fatalf("%d comparisons, want 1: the second resync knows resourceVersion 10", got-compared)
	}
	if got := driftsFound.Get(); got != drifts {
		t.Fatalf("drifts found %d, want %d: another writer's own field is no drift", got, drifts)
	}
}
