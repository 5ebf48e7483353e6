package stages

import (
	"bytes"
	"encoding/json"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

func jsonPod(ns, name, uid string) *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID(uid), Labels: map[string]string{"app": "<x>&"}},
		Spec:       v1.PodSpec{Containers: []v1.Container{{Name: "app", Image: "busybox", Env: []v1.EnvVar{{Name: "A", Value: "b"}}}}},
	}
}

// The encoded items are what encoding/json makes of Pods(), in its order,
// HTML escaping included, and an encoding lives exactly as long as its
// status.
func TestPodsJSONMatchesPods(t *testing.T) {
	s := NewStatusStore()
	a, b, c := jsonPod("ns2", "a", "u1"), jsonPod("ns1", "b", "u2"), jsonPod("ns1", "a", "u3")
	s.Set(a, v1.PodStatus{Phase: v1.PodRunning})
	s.Set(b, v1.PodStatus{Phase: v1.PodPending, Message: "<waiting>"})
	s.Set(c, v1.PodStatus{Phase: v1.PodSucceeded})

	check := func() [][]byte {
		t.Helper()
		items, err := s.PodsJSON()
		if err != nil {
			t.Fatal(err)
		}
		pods := s.Pods()
		if len(items) != len(pods) {
			t.Fatalf("%d items, %d pods", len(items), len(pods))
		}
		for i := range pods {
			want, _ := json.Marshal(&pods[i])
			if !bytes.Equal(items[i], want) {
				t.Errorf("item %d:\n got %s\nwant %s", i, items[i], want)
			}
		}
		return items
	}
	first := check()
	if got := string(first[0]); !bytes.Contains(first[0], []byte(`"name":"a","namespace":"ns1"`)) {
		t.Errorf("first item is not ns1/a: %s", got)
	}

	again := check()
	for i := range first {
		if &first[i][0] != &again[i][0] {
			t.Errorf("item %d encoded again with no change", i)
		}
	}

	s.Set(b, v1.PodStatus{Phase: v1.PodRunning})
	changed := check()
	if &changed[1][0] == &first[1][0] {
		t.Error("the changed pod kept its old encoding")
	}
	if &changed[0][0] != &first[0][0] || &changed[2][0] != &first[2][0] {
		t.Error("unchanged pods were encoded again")
	}

	s.Delete(b.UID)
	if items, _ := s.PodsJSON(); len(items) != 2 {
		t.Errorf("%d items after a delete, want 2", len(items))
	}
}

// All yields the stored pod and status themselves, in Pods' order.
func TestAllSharesWithoutCopying(t *testing.T) {
	s := NewStatusStore()
	a, b := jsonPod("ns", "b", "u1"), jsonPod("ns", "a", "u2")
	s.Set(a, v1.PodStatus{Phase: v1.PodRunning})
	s.Set(b, v1.PodStatus{Phase: v1.PodPending})
	var names []string
	for p, st := range s.All() {
		names = append(names, p.Name+"="+string(st.Phase))
		if p != a && p != b {
			t.Errorf("pod %s is a copy", p.Name)
		}
	}
	if len(names) != 2 || names[0] != "a=Pending" || names[1] != "b=Running" {
		t.Errorf("All = %v", names)
	}
	for range s.All() {
		break // stopping early must not panic
	}
}
