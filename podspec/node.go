package podspec

import (
	"fmt"
	"path/filepath"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podline/podline/cgroupfs"
	"github.com/podline/podline/internal/poduid"
)

// Node is what podline knows of the node it runs on: what pod configs
// are built from, and what admission checks against.
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
	// Security is what the node adds to the confinement pods ask for.
	Security Security
}

// PodDir is the pod's directory under the root dir. uid must be one path
// element (poduid.Valid): the sources admit no other, so another is a bug
// that must not become a path.
func (n *Node) PodDir(uid types.UID) string {
	if !poduid.Valid(uid) {
		panic(fmt.Sprintf("BUG: podspec: pod directory for the unchecked UID %q", uid))
	}
	return filepath.Join(n.PodsDir(), string(uid))
}

// PodsDir holds a directory per pod, named by UID.
func (n *Node) PodsDir() string { return filepath.Join(n.RootDir, "pods") }

// PodLogDir is the pod's CRI log directory: <ns>_<name>_<uid>. It must be
// one path element, which the sources see to; another is a bug that must
// not become a path.
func (n *Node) PodLogDir(namespace, name string, uid types.UID) string {
	entry, ok := PodLogEntry(namespace, name, uid)
	if !ok {
		panic(fmt.Sprintf("BUG: podspec: log directory for the unchecked pod %q/%q (%q)", namespace, name, uid))
	}
	return filepath.Join(n.LogsDir, entry)
}

// PodLogEntry names the log directory; ok is false when the name would not
// be one path element. The name ends in the UID, which is the pod's alone,
// so it can only ever be that pod's directory.
func PodLogEntry(namespace, name string, uid types.UID) (string, bool) {
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
