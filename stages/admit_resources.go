package stages

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"
)

// Request is what a pod asks of the node.
type Request struct {
	CPUMilli              int64
	MemoryBytes           int64
	EphemeralStorageBytes int64
	// Scalars are the other resources asked for by name, in their own
	// units: hugepages-<size> (bytes), extended resources such as
	// example.com/gpu (a count). Nil when there are none.
	Scalars map[v1.ResourceName]int64
}

// PodRequest is a pod's effective request, as the scheduler and the
// kubelet count it, per resource: the sum over its app containers and
// sidecars (which run beside them), or what an init container needs
// while it runs if that is more: an ordinary one runs alone beside the
// sidecars started before it, and a sidecar beside the ones before it;
// a pod-level request replaces the containers' for cpu, memory and
// hugepages; the pod overhead is added. A container or pod that sets only
// a limit requests the limit, as the API server's defaulting would have
// made it.
func PodRequest(pod *v1.Pod) Request {
	var app, sidecars, init Request
	for i := range pod.Spec.Containers {
		eachRequest(&pod.Spec.Containers[i].Resources, func(name v1.ResourceName, v int64) {
			app.set(name, app.get(name)+v)
		})
	}
	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		var own Request
		eachRequest(&c.Resources, func(name v1.ResourceName, v int64) { own.set(name, v) })
		if isSidecar(c) {
			app.add(&own, 1)
			sidecars.add(&own, 1)
			own = sidecars.clone()
		} else {
			own.add(&sidecars, 1)
		}
		eachName(&own, func(name v1.ResourceName, v int64) { init.set(name, max(init.get(name), v)) })
	}
	req := app
	eachName(&init, func(name v1.ResourceName, v int64) { req.set(name, max(req.get(name), v)) })
	if r := pod.Spec.Resources; r != nil {
		eachRequest(r, func(name v1.ResourceName, v int64) {
			_, requested := r.Requests[name]
			switch {
			case name != v1.ResourceCPU && name != v1.ResourceMemory && !isHugePages(name):
			case requested, req.get(name) == 0, isHugePages(name):
				// A pod-level limit alone stands for the request unless the
				// containers request the resource (hugepages cannot be
				// overcommitted: there the limit wins).
				req.set(name, v)
			}
		})
	}
	for name, q := range pod.Spec.Overhead {
		req.set(name, req.get(name)+quantityOf(name, q))
	}
	return req
}

// eachRequest calls fn with each resource of r and its request, or its
// limit when only that is set. Resources admission does not count are left
// out.
func eachRequest(r *v1.ResourceRequirements, fn func(v1.ResourceName, int64)) {
	for name, q := range r.Requests {
		if counted(name) {
			fn(name, quantityOf(name, q))
		}
	}
	for name, q := range r.Limits {
		if _, ok := r.Requests[name]; !ok && counted(name) {
			fn(name, quantityOf(name, q))
		}
	}
}

// quantityOf is q in the unit admission counts name in: millicores for
// cpu, whole units (rounded up) for the rest.
func quantityOf(name v1.ResourceName, q resource.Quantity) int64 {
	if name == v1.ResourceCPU {
		return q.MilliValue()
	}
	return q.Value()
}

// counted reports whether admission counts a resource: cpu, memory,
// ephemeral-storage, and the scalar resources (hugepages, extended and
// kubernetes.io/ ones, attachable volumes).
func counted(name v1.ResourceName) bool {
	switch name {
	case v1.ResourceCPU, v1.ResourceMemory, v1.ResourceEphemeralStorage:
		return true
	}
	return isHugePages(name) || isExtended(name) ||
		strings.Contains(string(name), v1.ResourceDefaultNamespacePrefix) ||
		strings.HasPrefix(string(name), v1.ResourceAttachableVolumesPrefix)
}

func isHugePages(name v1.ResourceName) bool {
	return strings.HasPrefix(string(name), v1.ResourceHugePagesPrefix)
}

// isExtended reports whether name is an extended resource: a domain-
// qualified name outside kubernetes.io, such as example.com/gpu, that
// would also make a valid quota name.
func isExtended(name v1.ResourceName) bool {
	s := string(name)
	if !strings.Contains(s, "/") || strings.Contains(s, v1.ResourceDefaultNamespacePrefix) ||
		strings.HasPrefix(s, v1.DefaultResourceRequestsPrefix) {
		return false
	}
	return len(validation.IsQualifiedName(v1.DefaultResourceRequestsPrefix+s)) == 0
}

func (r *Request) get(name v1.ResourceName) int64 {
	switch name {
	case v1.ResourceCPU:
		return r.CPUMilli
	case v1.ResourceMemory:
		return r.MemoryBytes
	case v1.ResourceEphemeralStorage:
		return r.EphemeralStorageBytes
	}
	return r.Scalars[name]
}

// set stores v; a scalar that drops to zero is forgotten, so a ledger's
// map does not keep every name a pod ever asked for.
func (r *Request) set(name v1.ResourceName, v int64) {
	switch name {
	case v1.ResourceCPU:
		r.CPUMilli = v
	case v1.ResourceMemory:
		r.MemoryBytes = v
	case v1.ResourceEphemeralStorage:
		r.EphemeralStorageBytes = v
	default:
		if v == 0 {
			delete(r.Scalars, name)
			return
		}
		if r.Scalars == nil {
			r.Scalars = make(map[v1.ResourceName]int64)
		}
		r.Scalars[name] = v
	}
}

// eachName calls fn with every non-zero resource of r.
func eachName(r *Request, fn func(v1.ResourceName, int64)) {
	for _, name := range []v1.ResourceName{v1.ResourceCPU, v1.ResourceMemory, v1.ResourceEphemeralStorage} {
		if v := r.get(name); v != 0 {
			fn(name, v)
		}
	}
	for name, v := range r.Scalars {
		fn(name, v)
	}
}

// add adds or, with sign -1, takes off o.
func (r *Request) add(o *Request, sign int64) {
	eachName(o, func(name v1.ResourceName, v int64) { r.set(name, r.get(name)+sign*v) })
}

func (r Request) clone() Request {
	if r.Scalars != nil {
		r.Scalars = maps.Clone(r.Scalars)
	}
	return r
}

// fitResources returns the first resource the node has too little of
// next to the admitted pods, in the kubelet's order: pods, cpu, memory,
// ephemeral-storage, then the scalars (by name, where the kubelet's order
// is a map's). An extended resource the node does not advertise is not
// checked, as the kubelet does not: it may be a cluster-level resource the
// node knows nothing of. Hugepages and kubernetes.io/ resources are always
// checked, against zero when the node has none.
func fitResources(req *Request, node *Node, admitted *Ledger) *Rejection {
	pods := int64(admitted.Len())
	if node.MaxPods > 0 && pods+1 > int64(node.MaxPods) {
		return outOf(v1.ResourcePods, 1, pods, int64(node.MaxPods))
	}
	used := &admitted.used
	if req.CPUMilli > 0 && req.CPUMilli > node.CPUMilli-used.CPUMilli {
		return outOf(v1.ResourceCPU, req.CPUMilli, used.CPUMilli, node.CPUMilli)
	}
	if req.MemoryBytes > 0 && req.MemoryBytes > node.MemoryBytes-used.MemoryBytes {
		return outOf(v1.ResourceMemory, req.MemoryBytes, used.MemoryBytes, node.MemoryBytes)
	}
	if len(req.Scalars) == 0 && req.EphemeralStorageBytes == 0 {
		return nil
	}
	names := []v1.ResourceName{v1.ResourceEphemeralStorage}
	for name := range req.Scalars {
		names = append(names, name)
	}
	slices.Sort(names[1:])
	for _, name := range names {
		want := req.get(name)
		alloc, advertised := node.Allocatable[name]
		if want <= 0 || !advertised && isExtended(name) {
			continue
		}
		capacity := quantityOf(name, alloc)
		if want > capacity-used.get(name) {
			return outOf(name, want, used.get(name), capacity)
		}
	}
	return nil
}

// outOf is the kubelet's rejection for a resource the node lacks.
func outOf(name v1.ResourceName, requested, used, capacity int64) *Rejection {
	return &Rejection{
		Reason: "OutOf" + string(name),
		Message: fmt.Sprintf("Node didn't have enough resource: %s, requested: %d, used: %d, capacity: %d",
			name, requested, used, capacity),
	}
}
