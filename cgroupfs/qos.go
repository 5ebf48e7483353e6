package cgroupfs

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// QOSClass computes a pod's quality of service class the way Kubernetes
// does: Guaranteed when every container (init containers included) limits
// cpu and memory and requests equal limits; BestEffort when no container
// requests or limits either; Burstable otherwise.
func QOSClass(pod *v1.Pod) v1.PodQOSClass {
	if pod.Status.QOSClass != "" {
		return pod.Status.QOSClass
	}
	any, guaranteed := false, true
	check := func(c *v1.Container) {
		for _, name := range []v1.ResourceName{v1.ResourceCPU, v1.ResourceMemory} {
			lim, hasLim := nonZero(c.Resources.Limits, name)
			req, hasReq := nonZero(c.Resources.Requests, name)
			if hasLim || hasReq {
				any = true
			}
			if !hasLim {
				guaranteed = false
				continue
			}
			// An unset request defaults to the limit.
			if hasReq && req.Cmp(lim) != 0 {
				guaranteed = false
			}
		}
	}
	for i := range pod.Spec.InitContainers {
		check(&pod.Spec.InitContainers[i])
	}
	for i := range pod.Spec.Containers {
		check(&pod.Spec.Containers[i])
	}
	switch {
	case !any:
		return v1.PodQOSBestEffort
	case guaranteed:
		return v1.PodQOSGuaranteed
	}
	return v1.PodQOSBurstable
}

func nonZero(rl v1.ResourceList, name v1.ResourceName) (resource.Quantity, bool) {
	q, ok := rl[name]
	if !ok || q.IsZero() {
		return q, false
	}
	return q, true
}
