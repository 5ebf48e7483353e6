package stages

import (
	"k8s.io/apimachinery/pkg/types"

	"github.com/podline/podline/internal/onefs"
	"github.com/podline/podline/internal/poduid"
	"github.com/podline/podline/podspec"
)

// Node is what the stages know of the node they run on.
type Node = podspec.Node

// removePodDir removes the pod's directory: the entry named uid in
// <root-dir>/pods, looked up there alone and never resolved as a path, and
// removed without reaching into a volume mount still left below it. A
// UID that is not one path element names nothing podline made: nothing
// is removed.
func removePodDir(n *Node, uid types.UID) error {
	if !poduid.Valid(uid) {
		return nil
	}
	return onefs.RemoveEntry(n.PodsDir(), string(uid))
}

// removePodLogDir removes the pod's log directory, as removePodDir the
// pod's directory. An orphan's name and namespace come from its runtime
// labels: when they could not make one path element, they name nothing
// podline made, and nothing is removed.
func removePodLogDir(n *Node, namespace, name string, uid types.UID) error {
	entry, ok := podspec.PodLogEntry(namespace, name, uid)
	if !ok {
		return nil
	}
	return onefs.RemoveEntry(n.LogsDir, entry)
}
