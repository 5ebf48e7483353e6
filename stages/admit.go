package stages

import (
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podline/podline/cgroupfs"
	"github.com/podline/podline/pleg"
	"github.com/podline/podline/sysctl"
)

// AdmitNode is the node as admission sees it.
type AdmitNode struct {
	// Node gives the name and the allocatable resources.
	Node *Node
	// Labels are the node's labels, for nodeSelector and node affinity.
	Labels map[string]string
	// Taints are the node's taints; only NoExecute ones refuse pods.
	Taints []v1.Taint
	// Sysctls are the sysctls pods may set; nil allows none.
	Sysctls *sysctl.Allowlist
}

// Ledger is what the admitted pods hold of the node: how many there are,
// the sum of their requests and the host ports they bind. Checking a pod
// against it costs a lookup per resource and port the pod asks for,
// whatever the number of pods.
type Ledger struct {
	pods  map[types.UID]holding
	used  Request
	ports portSet
}

// holding is one admitted pod's share.
type holding struct {
	req   Request
	ports []hostPort
}

// demand is what admission reads of a pod, worked out once per decision.
type demand struct {
	req   Request
	ports []hostPort
}

func demandOf(pod *v1.Pod) demand { return demand{req: PodRequest(pod), ports: hostPorts(pod)} }

// Len returns the number of admitted pods.
func (l *Ledger) Len() int { return len(l.pods) }

// Holds reports whether uid is admitted.
func (l *Ledger) Holds(uid types.UID) bool {
	_, ok := l.pods[uid]
	return ok
}

// Used returns the sum of the admitted pods' requests (a copy).
func (l *Ledger) Used() Request { return l.used.clone() }

// Add admits pod to the ledger without checking it fits; re-adding an
// admitted pod changes nothing.
func (l *Ledger) Add(pod *v1.Pod) { l.add(pod.UID, demandOf(pod)) }

func (l *Ledger) add(uid types.UID, d demand) {
	if l.Holds(uid) {
		return
	}
	if l.pods == nil {
		l.pods = make(map[types.UID]holding)
	}
	l.pods[uid] = holding{req: d.req, ports: d.ports}
	l.used.add(&d.req, 1)
	l.ports.add(d.ports)
}

// Remove gives back uid's share; it reports whether uid held one.
func (l *Ledger) Remove(uid types.UID) bool {
	h, ok := l.pods[uid]
	if !ok {
		return false
	}
	delete(l.pods, uid)
	l.used.add(&h.req, -1)
	l.ports.remove(h.ports)
	return true
}

// Admit decides whether a pod may run on the node next to the pods
// admitted so far. It returns nil when it may, else the kubelet's reason
// and message for the first check it fails, in the kubelet's order:
// sysctls, the operating system, resources (pods, cpu, memory,
// ephemeral-storage, the others), node affinity and nodeSelector, the
// node name, host ports, NoExecute taints, AppArmor.
func Admit(pod *v1.Pod, node *AdmitNode, admitted *Ledger) *Rejection {
	d := demandOf(pod)
	return admit(pod, &d, node, admitted)
}

func admit(pod *v1.Pod, d *demand, node *AdmitNode, admitted *Ledger) *Rejection {
	if rej := sysctlRejection(pod, node.Sysctls); rej != nil {
		return rej
	}
	if rej := osRejection(pod); rej != nil {
		return rej
	}
	if rej := fitResources(&d.req, node.Node, admitted); rej != nil {
		return rej
	}
	if !matchesNodeAffinity(pod, node.Node.Name, node.Labels) {
		return predicateFailed("NodeAffinity", "node(s) didn't match Pod's node affinity/selector")
	}
	if pod.Spec.NodeName != "" && pod.Spec.NodeName != node.Node.Name {
		return predicateFailed("NodeName", "node(s) didn't match the requested node name")
	}
	if admitted.ports.conflictsAny(d.ports) {
		return predicateFailed("NodePorts", "node(s) didn't have free ports for the requested pod ports")
	}
	if _, barred := untoleratedTaint(pod, node.Taints); barred {
		return predicateFailed("TaintToleration", "node(s) had taints that the pod didn't tolerate")
	}
	if rej := appArmorRejection(pod, node.Node); rej != nil {
		return rej
	}
	return nil
}

// predicateFailed is the kubelet's rejection for a failed scheduler
// predicate: the predicate's name is the reason.
func predicateFailed(name, why string) *Rejection {
	return &Rejection{Reason: name, Message: "Predicate " + name + " failed: " + why}
}

// Admitter is the admit stage. It keeps the ledger of admitted pods, so
// admission is a check against running totals, not a walk over every pod.
//
// Pods a source adds together are decided together, oldest first
// (Arrived), before their passes start: the stage's workers then take the
// passes in whatever order and only carry the decision out. After a
// restart every source hands over all its pods at once; deciding them by
// age, with the pods that run ahead of all others, means a pod that was
// running keeps its place and a newer pod is the one refused. A pod that
// reaches the stage undecided (Upserted on its own) is decided there.
type Admitter struct {
	Node *Node
	// Labels are the node's labels, for nodeSelector and node affinity.
	Labels map[string]string
	// Taints are the node's taints (in cluster mode, those it registered
	// with).
	Taints []v1.Taint
	// Sysctls are the sysctls pods may set; nil allows none.
	Sysctls *sysctl.Allowlist
	// Cache, if set, tells which pods already run, to decide those first.
	Cache *pleg.Cache
	// OnBurstableCPU, if set, learns the cpu requested by the admitted
	// Burstable pods whenever it changes (for kubepods/burstable's shares).
	OnBurstableCPU func(totalMilli int64)
	Events         Recorder
	// OnAdmitted, if set, is called in an admitted pod's pass before its
	// volumes, sandbox and containers are set up (wired to the status
	// stage's PublishPending).
	OnAdmitted func(w *Work)

	mu     sync.Mutex
	ledger Ledger
	// refused holds the rejections Arrived decided, until the pod's pass
	// reaches the stage (or the pod goes first).
	refused   map[types.UID]*Rejection
	burstable map[types.UID]int64
	// burstableTotal is the sum of burstable; guarded by mu.
	burstableTotal int64
}

func (a *Admitter) node() AdmitNode {
	return AdmitNode{Node: a.Node, Labels: a.Labels, Taints: a.Taints, Sysctls: a.Sysctls}
}

func (a *Admitter) Handle(w *Work) Outcome {
	a.mu.Lock()
	rej, decided := a.refused[w.UID]
	if decided {
		delete(a.refused, w.UID)
	} else {
		rej = a.decideLocked(w.UID, w.Pod)
	}
	a.mu.Unlock()
	if rej != nil {
		podsRejected.Inc()
		w.Sync.Rejection = rej
		recorderOr(a.Events).PodEvent(w.Pod, "", v1.EventTypeWarning, rej.Reason, rej.Message)
		return Skip(StageStatus)
	}
	w.Sync.Admitted = true
	if a.OnAdmitted != nil {
		a.OnAdmitted(w)
	}
	return Next()
}

// Arrived decides the admission of pods a source has just added, in the
// order sortForAdmission gives, and leaves pods in that order. Their
// passes, started after, find the decision made. Pods already being
// deleted are not decided: their first pass stops them.
func (a *Admitter) Arrived(pods []*v1.Pod) {
	sortForAdmission(pods, a.inRuntime)
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, pod := range pods {
		if pod.DeletionTimestamp != nil || a.ledger.Holds(pod.UID) {
			continue
		}
		if _, done := a.refused[pod.UID]; done {
			continue
		}
		if rej := a.decideLocked(pod.UID, pod); rej != nil {
			if a.refused == nil {
				a.refused = make(map[types.UID]*Rejection)
			}
			a.refused[pod.UID] = rej
		}
	}
}

// inRuntime tells what the runtime holds of a pod.
func (a *Admitter) inRuntime(uid types.UID) inRuntime {
	if a.Cache == nil {
		return inRuntime{}
	}
	rt := a.Cache.Get(uid)
	if rt == nil || len(rt.Sandboxes) == 0 {
		return inRuntime{}
	}
	return inRuntime{
		Since: rt.Sandboxes[len(rt.Sandboxes)-1].CreatedAt,
		Ready: rt.CurrentSandbox().State == pleg.SandboxReady,
	}
}

// decideLocked admits pod into the ledger, or returns why not. An
// admitted pod stays admitted. Callers hold a.mu.
func (a *Admitter) decideLocked(uid types.UID, pod *v1.Pod) *Rejection {
	if a.ledger.Holds(uid) {
		return nil
	}
	d := demandOf(pod)
	node := a.node()
	if rej := admit(pod, &d, &node, &a.ledger); rej != nil {
		return rej
	}
	a.ledger.add(uid, d)
	if cgroupfs.QOSClass(pod) != v1.PodQOSBurstable {
		return nil
	}
	if a.burstable == nil {
		a.burstable = make(map[types.UID]int64)
	}
	m := cgroupfs.PodCPURequestMilli(pod)
	a.burstable[uid] = m
	a.burstableTotal += m
	// Told under the lock, so totals reach the cgroup in order.
	if m > 0 && a.OnBurstableCPU != nil {
		a.OnBurstableCPU(a.burstableTotal)
	}
	return nil
}

// Release returns a pod's share: it finished, or was torn down. A
// rejection decided for it and never carried out is dropped.
func (a *Admitter) Release(uid types.UID) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.ledger.Remove(uid)
	delete(a.refused, uid)
	m, burstable := a.burstable[uid]
	if !burstable {
		return
	}
	delete(a.burstable, uid)
	a.burstableTotal -= m
	if m > 0 && a.OnBurstableCPU != nil {
		a.OnBurstableCPU(a.burstableTotal)
	}
}

// Admitted returns the number of admitted pods and their total request.
func (a *Admitter) Admitted() (int, Request) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.ledger.Len(), a.ledger.Used()
}
