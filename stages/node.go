package stages

import (
	"fmt"
	"path/filepath"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podline/podline/cgroupfs"
	"github.com/podline/podline/internal/onefs"
	"github.com/podline/podline/internal/poduid"
)

// Node is what the stages know of the node they run on.
type Node struct {
	Name string
	// IPs are the node's addresses, primary first: status.hostIP, and the
	// pod IP of host-network pods.
	IPs []string
	// Allocatable resources for admission: millicores, bytes, pods.
	CPUMilli    int64
	MemoryBytes int64
	MaxPods     int
	// Capacity and Allocatable as the Node object reports them.
	Capacity, Allocatable v1.ResourceList
	// RootDir is --root-dir: pod directories and volumes live under it.
	RootDir string
	// LogsDir holds the CRI log directories, /var/log/pods.
	LogsDir string
	Cgroups cgroupfs.Layout
	DNS     DNS
}

// PodDir is the pod's directory under the root dir. uid must be one path
// element (poduid.Valid): the sources admit no other, so another is a bug
// that must not become a path.
func (n *Node) PodDir(uid types.UID) string {
	if !poduid.Valid(uid) {
		panic(fmt.Sprintf("BUG: stages: pod directory for the unchecked UID %q", uid))
	}
	return filepath.Join(n.podsDir(), string(uid))
}

func (n *Node) podsDir() string { return filepath.Join(n.RootDir, "pods") }

// RemovePodDir removes the pod's directory: the entry named uid in
// <root-dir>/pods, looked up there alone and never resolved as a path, and
// removed without reaching into a volume mount still left below it. A
// UID that is not one path element names nothing podline made: nothing
// is removed.
func (n *Node) RemovePodDir(uid types.UID) error {
	if !poduid.Valid(uid) {
		return nil
	}
	return onefs.RemoveEntry(n.podsDir(), string(uid))
}

// PodLogDir is the pod's CRI log directory: <ns>_<name>_<uid>. It must be
// one path element, which the sources see to; another is a bug that must
// not become a path.
func (n *Node) PodLogDir(namespace, name string, uid types.UID) string {
	entry, ok := podLogEntry(namespace, name, uid)
	if !ok {
		panic(fmt.Sprintf("BUG: stages: log directory for the unchecked pod %q/%q (%q)", namespace, name, uid))
	}
	return filepath.Join(n.LogsDir, entry)
}

// RemovePodLogDir removes the pod's log directory, as RemovePodDir the
// pod's directory. An orphan's name and namespace come from its runtime
// labels: when they could not make one path element, they name nothing
// podline made, and nothing is removed.
func (n *Node) RemovePodLogDir(namespace, name string, uid types.UID) error {
	entry, ok := podLogEntry(namespace, name, uid)
	if !ok {
		return nil
	}
	return onefs.RemoveEntry(n.LogsDir, entry)
}

// podLogEntry names the log directory; ok is false when the name would not
// be one path element. The name ends in the UID, which is the pod's alone,
// so it can only ever be that pod's directory.
func podLogEntry(namespace, name string, uid types.UID) (string, bool) {
	ok := poduid.Valid(uid) && namespace != "" && name != "" && !strings.ContainsAny(namespace+name, "/\x00")
	return namespace + "_" + name + "_" + string(uid), ok
}

// HostIP returns the node's primary address, or "".
func (n *Node) HostIP() string {
	if len(n.IPs) == 0 {
		return ""
	}
	return n.IPs[0]
}
