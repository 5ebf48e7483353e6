package cgroupfs

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// QOSClass computes a pod's quality of service class the way Kubernetes
// does. Over all containers (init containers included), positive cpu and
// memory requests and limits are summed; zero values count as absent:
//   - BestEffort: no requests and no limits at all;
//   - Guaranteed: every container limits both cpu and memory, and the
//     summed requests equal the summed limits;
//   - Burstable: anything else.
//
// A request missing from a container defaults to its limit first, as API
// defaulting would have done; an explicit zero request does not.
func QOSClass(pod *v1.Pod) v1.PodQOSClass {
	if pod.Status.QOSClass != "" {
		return pod.Status.QOSClass
	}
	requests, limits := v1.ResourceList{}, v1.ResourceList{}
	guaranteed := true
	add := func(sum v1.ResourceList, name v1.ResourceName, q resource.Quantity) {
		if q.Sign() <= 0 {
			return
		}
		if have, ok := sum[name]; ok {
			q.Add(have)
		}
		sum[name] = q
	}
	visit := func(c *v1.Container) {
		for _, name := range []v1.ResourceName{v1.ResourceCPU, v1.ResourceMemory} {
			lim, hasLim := c.Resources.Limits[name]
			req, hasReq := c.Resources.Requests[name]
			if !hasReq && hasLim {
				req, hasReq = lim, true
			}
			if hasReq {
				add(requests, name, req.DeepCopy())
			}
			if hasLim {
				add(limits, name, lim.DeepCopy())
			}
			if !hasLim || lim.Sign() <= 0 {
				guaranteed = false
			}
		}
	}
	for i := range pod.Spec.InitContainers {
		visit(&pod.Spec.InitContainers[i])
	}
	for i := range pod.Spec.Containers {
		visit(&pod.Spec.Containers[i])
	}
	if len(requests) == 0 && len(limits) == 0 {
		return v1.PodQOSBestEffort
	}
	if guaranteed && len(requests) == len(limits) {
		for name, req := range requests {
			if lim, ok := limits[name]; !ok || lim.Cmp(req) != 0 {
				guaranteed = false
			}
		}
		if guaranteed {
			return v1.PodQOSGuaranteed
		}
	}
	return v1.PodQOSBurstable
}
