package stages_test

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podline/podline/stages"
)

// A pod is found by namespace and name; while an old and a new pod share
// the name, the newer is found, and the older by its UID.
func TestStatusStoreFind(t *testing.T) {
	s := stages.NewStatusStore()
	pod := func(uid types.UID) *v1.Pod {
		return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web", UID: uid}}
	}
	f := func(uid types.UID, want types.UID) {
		t.Helper()
		p, _, ok := s.Find("ns", "web", uid)
		switch {
		case want == "" && ok:
			t.Errorf("Find(uid %q) = %s, want none", uid, p.UID)
		case want != "" && (!ok || p.UID != want):
			t.Errorf("Find(uid %q) = %v %v, want %s", uid, p, ok, want)
		}
	}
	f("", "")
	s.Set(pod("old"), v1.PodStatus{Phase: v1.PodRunning})
	f("", "old")
	s.Set(pod("new"), v1.PodStatus{Phase: v1.PodPending})
	s.Set(pod("old"), v1.PodStatus{Phase: v1.PodSucceeded}) // an update keeps the order
	f("", "new")
	f("old", "old")
	f("other", "")
	s.Delete("new")
	f("", "old")
	s.Delete("old")
	f("", "")
	if _, _, ok := s.Find("ns", "other", ""); ok {
		t.Error("found a pod by another name")
	}
}
