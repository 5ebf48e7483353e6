package sources

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
)

func versioned(p *v1.Pod, rv string) *v1.Pod {
	p = p.DeepCopy()
	p.ResourceVersion = rv
	return p
}

func TestPodStoreSnapshots(t *testing.T) {
	s := newPodStore("node1")
	a, b, m := versioned(apiPod("a", "node1"), "1"), versioned(apiPod("b", "node1"), "1"), versioned(mirrorPod("m", "node1"), "1")
	a.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kube-scheduler"}}
	if err := s.Replace([]any{a, b, m, versioned(apiPod("x", "node2"), "1")}, "1"); err != nil {
		t.Fatal(err)
	}
	if !s.synced.Load() {
		t.Fatal("not synced after Replace")
	}
	if a.ManagedFields != nil {
		t.Error("managed fields kept")
	}

	snap := func(wantPods, wantMirrors int, podsChanged, mirrorsChanged bool) []*v1.Pod {
		t.Helper()
		pods, pc, mirrors, mc := s.snapshot(nil)
		if pc != podsChanged || mc != mirrorsChanged {
			t.Fatalf("changed: pods %v mirrors %v, want %v %v", pc, mc, podsChanged, mirrorsChanged)
		}
		if len(pods) != wantPods || len(mirrors) != wantMirrors {
			t.Fatalf("%d pods, %d mirrors; want %d, %d", len(pods), len(mirrors), wantPods, wantMirrors)
		}
		return pods
	}
	snap(2, 1, true, true)
	snap(0, 0, false, false)

	// A relist of unchanged versions keeps the stored pointers; a moved
	// version brings the new object.
	b2 := versioned(b, "2")
	if err := s.Replace([]any{versioned(a, "1"), b2, versioned(m, "1")}, "2"); err != nil {
		t.Fatal(err)
	}
	for _, p := range snap(2, 1, true, true) {
		switch p.Name {
		case "a":
			if p != a {
				t.Error("unchanged pod a got a new pointer")
			}
		case "b":
			if p != b2 {
				t.Error("changed pod b kept its old object")
			}
		}
	}

	// Watch events mark only the set they touch.
	s.Update(versioned(m, "3"))
	snap(0, 1, false, true)
	s.Update(versioned(a, "1")) // a repeat of the stored version
	snap(0, 0, false, false)
	s.Add(versioned(apiPod("c", "node1"), "4"))
	snap(3, 0, true, false)
	s.Add(versioned(apiPod("y", "node2"), "5"))
	snap(0, 0, false, false)
	s.Delete(cacheTombstone(b2))
	snap(2, 0, true, false)
	s.Delete(m)
	snap(0, 0, false, true)
}

func TestPodStoreBecomesMirror(t *testing.T) {
	s := newPodStore("node1")
	a := versioned(apiPod("a", "node1"), "1")
	s.Replace([]any{a}, "1")
	s.snapshot(nil)
	am := versioned(a, "2")
	am.Annotations = map[string]string{ConfigMirrorAnnotation: "h"}
	s.Update(am)
	pods, pc, mirrors, mc := s.snapshot(nil)
	if !pc || !mc || len(pods) != 0 || len(mirrors) != 1 {
		t.Fatalf("pods %d (%v), mirrors %d (%v)", len(pods), pc, len(mirrors), mc)
	}
}

func cacheTombstone(p *v1.Pod) any {
	return cache.DeletedFinalStateUnknown{Key: p.Namespace + "/" + p.Name, Obj: p}
}

func TestPodStoreGetIsTheLatestVersion(t *testing.T) {
	s := newPodStore("node1")
	a, m := versioned(apiPod("a", "node1"), "1"), versioned(mirrorPod("m", "node1"), "1")
	s.Replace([]any{a, m}, "1")
	w := &APIWatcher{store: s}
	if p, ok := w.Pod(a.Namespace, "a"); !ok || p != a {
		t.Fatalf("pod a: %v %v", p, ok)
	}
	if p, ok := w.Pod(m.Namespace, "m"); !ok || p != m {
		t.Fatalf("mirror pod m: %v %v", p, ok)
	}
	a2 := versioned(a, "2")
	a2.Status.Phase = v1.PodRunning
	s.Update(a2)
	if p, _ := w.Pod(a.Namespace, "a"); p != a2 {
		t.Fatalf("pod a after an update: resourceVersion %s, want 2", p.ResourceVersion)
	}
	s.Delete(a2)
	if _, ok := w.Pod(a.Namespace, "a"); ok {
		t.Fatal("a deleted pod is still found")
	}
	if _, ok := w.Pod(a.Namespace, "nope"); ok {
		t.Fatal("a pod never delivered is found")
	}
}
