package stages

import (
	"fmt"
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podline/podline/cgroupfs"
	"github.com/podline/podline/podspec"
)

// Request is what a pod asks of the node.
type Request struct {
	CPUMilli    int64
	MemoryBytes int64
}

// PodRequest is a pod's effective request: the sum over its app
// containers, or the largest init container if that is more (init
// containers run one at a time, before the app containers).
func PodRequest(pod *v1.Pod) Request {
	var app, init Request
	for i := range pod.Spec.Containers {
		c := &pod.Spec.Containers[i]
		app.CPUMilli += effectiveRequest(c, v1.ResourceCPU, true)
		app.MemoryBytes += effectiveRequest(c, v1.ResourceMemory, false)
	}
	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		init.CPUMilli = max(init.CPUMilli, effectiveRequest(c, v1.ResourceCPU, true))
		init.MemoryBytes = max(init.MemoryBytes, effectiveRequest(c, v1.ResourceMemory, false))
	}
	return Request{CPUMilli: max(app.CPUMilli, init.CPUMilli), MemoryBytes: max(app.MemoryBytes, init.MemoryBytes)}
}

// effectiveRequest is the request, or the limit when only that is set.
func effectiveRequest(c *v1.Container, name v1.ResourceName, milli bool) int64 {
	if _, ok := c.Resources.Requests[name]; ok {
		return podspec.ContainerRequest(c, name, milli)
	}
	return podspec.ContainerLimit(c, name, milli)
}

// Admit decides whether a pod fits on the node next to what is already
// admitted (used, and pods admitted so far). It returns nil when it fits,
// else the kubelet's rejection reason.
func Admit(pod *v1.Pod, node *Node, labels map[string]string, used Request, pods int) *Rejection {
	if node.MaxPods > 0 && pods+1 > node.MaxPods {
		return outOf("pods", 1, int64(pods), int64(node.MaxPods))
	}
	req := PodRequest(pod)
	if req.CPUMilli > 0 && used.CPUMilli+req.CPUMilli > node.CPUMilli {
		return outOf("cpu", req.CPUMilli, used.CPUMilli, node.CPUMilli)
	}
	if req.MemoryBytes > 0 && used.MemoryBytes+req.MemoryBytes > node.MemoryBytes {
		return outOf("memory", req.MemoryBytes, used.MemoryBytes, node.MemoryBytes)
	}
	for k, v := range pod.Spec.NodeSelector {
		if labels[k] != v {
			return &Rejection{Reason: "NodeAffinity",
				Message: "Predicate NodeAffinity failed: node(s) didn't match Pod's node affinity/selector"}
		}
	}
	return nil
}

func outOf(res string, requested, used, capacity int64) *Rejection {
	return &Rejection{
		Reason: "OutOf" + res,
		Message: fmt.Sprintf("Node didn't have enough resource: %s, requested: %d, used: %d, capacity: %d",
			res, requested, used, capacity),
	}
}

// Admitter is the admit stage: it keeps the ledger of admitted pods'
// requests, so admission is a check against running totals, not a walk
// over every pod.
type Admitter struct {
	Node *Node
	// Labels are the node's labels, for nodeSelector.
	Labels map[string]string
	// OnBurstableCPU, if set, learns the cpu requested by the admitted
	// Burstable pods whenever it changes (for kubepods/burstable's shares).
	OnBurstableCPU func(totalMilli int64)
	Events         Recorder

	mu        sync.Mutex
	admitted  map[types.UID]Request
	used      Request
	burstable map[types.UID]int64
	// burstableTotal is the sum of burstable; guarded by mu.
	burstableTotal int64
}

func (a *Admitter) Handle(w *Work) Outcome {
	a.mu.Lock()
	if a.admitted == nil {
		a.admitted = make(map[types.UID]Request)
	}
	if _, ok := a.admitted[w.UID]; ok {
		a.mu.Unlock()
		w.Sync.Admitted = true
		return Next()
	}
	rej := Admit(w.Pod, a.Node, a.Labels, a.used, len(a.admitted))
	burstableChanged := false
	if rej == nil {
		req := PodRequest(w.Pod)
		a.admitted[w.UID] = req
		a.used.CPUMilli += req.CPUMilli
		a.used.MemoryBytes += req.MemoryBytes
		if cgroupfs.QOSClass(w.Pod) == v1.PodQOSBurstable {
			if a.burstable == nil {
				a.burstable = make(map[types.UID]int64)
			}
			m := cgroupfs.PodCPURequestMilli(w.Pod)
			a.burstable[w.UID] = m
			a.burstableTotal += m
			burstableChanged = m > 0
		}
	}
	// Told under the lock, so totals reach the cgroup in order.
	if burstableChanged && a.OnBurstableCPU != nil {
		a.OnBurstableCPU(a.burstableTotal)
	}
	a.mu.Unlock()
	if rej != nil {
		podsRejected.Inc()
		w.Sync.Rejection = rej
		recorderOr(a.Events).PodEvent(w.Pod, "", v1.EventTypeWarning, rej.Reason, rej.Message)
		return Skip(StageStatus)
	}
	w.Sync.Admitted = true
	return Next()
}

// Release returns a pod's share: it finished, or was torn down.
func (a *Admitter) Release(uid types.UID) {
	a.mu.Lock()
	if req, ok := a.admitted[uid]; ok {
		a.used.CPUMilli -= req.CPUMilli
		a.used.MemoryBytes -= req.MemoryBytes
		delete(a.admitted, uid)
	}
	m, burstable := a.burstable[uid]
	if burstable {
		delete(a.burstable, uid)
		a.burstableTotal -= m
	}
	if burstable && m > 0 && a.OnBurstableCPU != nil {
		a.OnBurstableCPU(a.burstableTotal)
	}
	a.mu.Unlock()
}

// Admitted returns the number of admitted pods and their total request.
func (a *Admitter) Admitted() (int, Request) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.admitted), a.used
}
