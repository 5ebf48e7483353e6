// Package podtest holds what tests share: the desired pods that the unit
// tests of the pure pod functions (podspec/, stages/) reason about, and a
// buffer for logs written while a test reads them. Tests only.
package podtest

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Pod is a pod "web" in "default" (UID "uid-web") with one app container
// "app" and restart policy Always, changed by mutate (nil entries are
// skipped).
func Pod(mutate ...func(*v1.Pod)) *v1.Pod {
	p := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: types.UID("uid-web")},
		Spec: v1.PodSpec{
			RestartPolicy: v1.RestartPolicyAlways,
			Containers:    []v1.Container{{Name: "app", Image: "busybox:1.36"}},
		},
	}
	for _, m := range mutate {
		if m != nil {
			m(p)
		}
	}
	return p
}

// Resources builds requirements from quantities; "" leaves one unset.
func Resources(cpuReq, memReq, cpuLim, memLim string) v1.ResourceRequirements {
	var r v1.ResourceRequirements
	set := func(rl *v1.ResourceList, name v1.ResourceName, q string) {
		if q == "" {
			return
		}
		if *rl == nil {
			*rl = v1.ResourceList{}
		}
		(*rl)[name] = resource.MustParse(q)
	}
	set(&r.Requests, v1.ResourceCPU, cpuReq)
	set(&r.Requests, v1.ResourceMemory, memReq)
	set(&r.Limits, v1.ResourceCPU, cpuLim)
	set(&r.Limits, v1.ResourceMemory, memLim)
	return r
}

// Ptr returns a pointer to a copy of v.
func Ptr[T any](v T) *T { return &v }

// Apps replaces the app containers with busybox ones of these names.
func Apps(names ...string) func(*v1.Pod) {
	return func(p *v1.Pod) {
		p.Spec.Containers = nil
		for _, n := range names {
			p.Spec.Containers = append(p.Spec.Containers, v1.Container{Name: n, Image: "busybox:1.36"})
		}
	}
}
