package mirror

import (
	"fmt"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podline/podline/sources"
)

func TestPlan(t *testing.T) {
	a, b := staticPod("a", "ha"), staticPod("b", "hb")
	statics := map[podName]*v1.Pod{nameOf(a): a, nameOf(b): b}
	ref := func(uid, hash string, deleting bool) mirrorRef {
		return mirrorRef{uid: types.UID(uid), hash: hash, deleting: deleting}
	}
	f := func(mirrors map[podName]mirrorRef, orphans bool, want ...string) {
		t.Helper()
		var got []string
		for _, act := range plan(statics, mirrors, orphans) {
			s := fmt.Sprintf("%s %s", act.op, act.name.name)
			if act.uid != "" {
				s += " " + string(act.uid)
			}
			got = append(got, s)
		}
		if strings.Join(got, "; ") != strings.Join(want, "; ") {
			t.Fatalf("plan:\n got: %q\nwant: %q", got, want)
		}
	}
	orphan := podName{"kube-system", "gone-node1"}

	f(nil, true, "create a-node1", "create b-node1")
	f(map[podName]mirrorRef{nameOf(a): ref("m1", "ha", false), nameOf(b): ref("m2", "hb", false)}, true)
	f(map[podName]mirrorRef{nameOf(a): ref("m1", "old", false), nameOf(b): ref("m2", "hb", true)}, true,
		"replace a-node1 m1", "replace b-node1 m2")
	// Orphans go only once the sources are all known.
	mirrors := map[podName]mirrorRef{nameOf(a): ref("m1", "ha", false), nameOf(b): ref("m2", "hb", false), orphan: ref("m3", "hx", false)}
	f(mirrors, false)
	f(mirrors, true, "delete gone-node1 m3")
}

func TestMirrorPodOf(t *testing.T) {
	s := staticPod("etcd", "h1")
	s.ResourceVersion, s.Finalizers = "7", []string{"x"}
	s.Status.Phase = v1.PodRunning
	s.Spec.NodeName = ""
	m := mirrorPodOf(s, testNode, "node-uid")

	if m.Namespace != "kube-system" || m.Name != "etcd-node1" || m.UID != "" || m.ResourceVersion != "" || m.Finalizers != nil {
		t.Errorf("metadata %+v", m.ObjectMeta)
	}
	if m.Spec.NodeName != testNode {
		t.Errorf("nodeName %q", m.Spec.NodeName)
	}
	if m.Status.Phase != "" {
		t.Errorf("status copied: %q", m.Status.Phase)
	}
	wantAnn := map[string]string{
		sources.ConfigHashAnnotation: "h1", sources.ConfigMirrorAnnotation: "h1",
		sources.ConfigSourceAnnotation: "file", sources.ConfigSeenAnnotation: "2026-11-21T00:00:00Z",
	}
	if fmt.Sprint(m.Annotations) != fmt.Sprint(wantAnn) || m.Labels["component"] != "etcd" {
		t.Errorf("annotations %v labels %v", m.Annotations, m.Labels)
	}
	if len(m.OwnerReferences) != 1 {
		t.Fatalf("owners %+v", m.OwnerReferences)
	}
	o := m.OwnerReferences[0]
	if o.APIVersion != "v1" || o.Kind != "Node" || o.Name != testNode || o.UID != "node-uid" ||
		o.Controller == nil || !*o.Controller || o.BlockOwnerDeletion != nil {
		t.Errorf("owner %+v", o)
	}

	// The mirror shares nothing with the static pod.
	m.Annotations["x"], m.Labels["x"] = "y", "y"
	m.Spec.Containers[0].Image = "other"
	if _, ok := s.Annotations[sources.ConfigMirrorAnnotation]; ok || s.Annotations["x"] != "" || s.Labels["x"] != "" || s.Spec.Containers[0].Image != "busybox:1.36" {
		t.Error("building the mirror changed the static pod")
	}

	// A static pod without config.hash is known by its UID.
	delete(s.Annotations, sources.ConfigHashAnnotation)
	if h := mirrorPodOf(s, testNode, "u").Annotations[sources.ConfigMirrorAnnotation]; h != "h1" {
		t.Errorf("hash from UID %q", h)
	}
}
