package stages

import (
	"slices"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// configSourceAnnotation names where a pod came from; the sources write it
// on every pod (sources.ConfigSourceAnnotation, which stages does not
// import: it does not own where pods come from).
const configSourceAnnotation = "kubernetes.io/config.source"

// StaticFullName is the key static pods take turns by, namespace/name,
// or "" for a pod that does not take turns. Like the kubelet, only static
// pods do: a pod with a config.source other than "api" (one without the
// annotation counts as an API pod). An edited manifest is a new pod (its
// UID hashes the content) with the old one's name, and the two versions
// share host ports and data directories (a kubeadm etcd or kube-apiserver),
// so one must be gone before the other starts. API pods neither wait nor
// are waited for: the API server keeps a pod's name taken until the node
// has stopped it, unless the deletion is forced.
func StaticFullName(pod *v1.Pod) string {
	if pod == nil {
		return ""
	}
	src, ok := pod.Annotations[configSourceAnnotation]
	if !ok || src == "api" {
		return ""
	}
	return pod.Namespace + "/" + pod.Name
}

// StaticTurn is the start order of the static pods that share one full
// name. Its methods are pure: they return a new StaticTurn and never modify
// the receiver's Waiting.
type StaticTurn struct {
	// Running is the pod let start. It keeps the turn until its teardown
	// has finished: containers and sandbox stopped and removed, volumes
	// and cgroup gone. Empty when none.
	Running types.UID
	// Waiting are the pods that want to start, in the order they arrived.
	// A pod leaves when it starts, or when it is torn down or rejected
	// before it started.
	Waiting []types.UID
}

// MayStart decides whether static pod uid may start now: it has the turn
// already, or no pod of its name runs and none waits before it. The
// kubelet starts the first waiting pod that is still wanted; pods that are
// not leave Waiting at once here, so that is the head.
func (t StaticTurn) MayStart(uid types.UID) bool {
	if t.Running != "" {
		return t.Running == uid
	}
	return len(t.Waiting) == 0 || t.Waiting[0] == uid
}

// Empty reports whether the turn tracks no pod, so it can be forgotten.
func (t StaticTurn) Empty() bool { return t.Running == "" && len(t.Waiting) == 0 }

// Want queues uid unless it runs or waits already.
func (t StaticTurn) Want(uid types.UID) StaticTurn {
	if t.Running == uid || slices.Contains(t.Waiting, uid) {
		return t
	}
	t.Waiting = append(slices.Clip(t.Waiting), uid)
	return t
}

// Start gives uid the turn if MayStart allows it.
func (t StaticTurn) Start(uid types.UID) (StaticTurn, bool) {
	if !t.MayStart(uid) {
		return t, false
	}
	if t.Running != uid {
		t.Running = uid
		t.Waiting = without(t.Waiting, uid)
	}
	return t, true
}

// Withdraw takes uid out of Waiting: it is to be torn down before it
// started. A running uid keeps the turn until Release. wake is the pod
// that may start now and must be told, if any.
func (t StaticTurn) Withdraw(uid types.UID) (_ StaticTurn, wake types.UID) {
	i := slices.Index(t.Waiting, uid)
	if i < 0 {
		return t, ""
	}
	t.Waiting = without(t.Waiting, uid)
	if i == 0 {
		wake = t.head()
	}
	return t, wake
}

// Release ends uid's turn, once its teardown has finished (or admission
// rejected it: it never runs), and takes it out of Waiting. wake is the
// pod that may start now, if any.
func (t StaticTurn) Release(uid types.UID) (_ StaticTurn, wake types.UID) {
	t, wake = t.Withdraw(uid)
	if t.Running == uid {
		t.Running = ""
		wake = t.head()
	}
	return t, wake
}

// head is the pod next in line while none runs.
func (t StaticTurn) head() types.UID {
	if t.Running != "" || len(t.Waiting) == 0 {
		return ""
	}
	return t.Waiting[0]
}

// without returns s less uid in a new slice, nil when nothing is left: a
// turn shares no backing array with the value it came from, and one that
// nobody waits for keeps none.
func without(s []types.UID, uid types.UID) []types.UID {
	i := slices.Index(s, uid)
	switch {
	case i < 0:
		return s
	case len(s) == 1:
		return nil
	}
	return slices.Concat(s[:i], s[i+1:])
}
