package sources

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestClassify(t *testing.T) {
	f := func(name string, change func(p *v1.Pod), want change) {
		t.Helper()
		old := testPod("a", "u")
		old.Spec.Containers[0].Resources.Limits = v1.ResourceList{v1.ResourceCPU: resource.MustParse("1")}
		next := old.DeepCopy()
		change(next)
		if got := classify(old, next); got != want {
			t.Errorf("%s: got %d, want %d", name, got, want)
		}
	}
	f("identical", func(*v1.Pod) {}, unchanged)
	f("same quantity written differently", func(p *v1.Pod) {
		p.Spec.Containers[0].Resources.Limits[v1.ResourceCPU] = resource.MustParse("1000m")
	}, unchanged)
	f("nil and empty", func(p *v1.Pod) { p.Spec.Volumes = []v1.Volume{}; p.Labels = map[string]string{} }, unchanged)
	f("resourceVersion", func(p *v1.Pod) { p.ResourceVersion = "7" }, unchanged)
	f("local annotations", func(p *v1.Pod) {
		p.Annotations = map[string]string{ConfigSeenAnnotation: "x", ConfigSourceAnnotation: "y", ConfigMirrorAnnotation: "z"}
	}, unchanged)
	f("quantity", func(p *v1.Pod) {
		p.Spec.Containers[0].Resources.Limits[v1.ResourceCPU] = resource.MustParse("2")
	}, changedSpec)
	f("annotation", func(p *v1.Pod) { p.Annotations = map[string]string{"a": "b"} }, changedSpec)
	f("label", func(p *v1.Pod) { p.Labels = map[string]string{"a": "b"} }, changedSpec)
	f("grace period", func(p *v1.Pod) { p.DeletionGracePeriodSeconds = ptrTo(int64(5)) }, changedSpec)
	f("deletion", func(p *v1.Pod) { now := metav1.Now(); p.DeletionTimestamp = &now }, changedDeletion)
	f("status", func(p *v1.Pod) { p.Status.PodIP = "10.0.0.1" }, changedStatus)
	f("status and spec", func(p *v1.Pod) { p.Status.PodIP = "10.0.0.1"; p.Spec.Hostname = "h" }, changedSpec)
}
