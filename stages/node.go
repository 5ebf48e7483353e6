package stages

import (
	"path/filepath"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podline/podline/cgroupfs"
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

// PodDir is the pod's directory under the root dir.
func (n *Node) PodDir(uid types.UID) string {
	return filepath.Join(n.RootDir, "pods", string(uid))
}

// PodLogDir is the pod's CRI log directory: <ns>_<name>_<uid>.
func (n *Node) PodLogDir(namespace, name string, uid types.UID) string {
	return filepath.Join(n.LogsDir, namespace+"_"+name+"_"+string(uid))
}

// HostIP returns the node's primary address, or "".
func (n *Node) HostIP() string {
	if len(n.IPs) == 0 {
		return ""
	}
	return n.IPs[0]
}
