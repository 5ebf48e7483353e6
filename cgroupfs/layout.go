package cgroupfs

import (
	"path"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podline/podline/internal/poduid"
)

// Layout places pod cgroups. The zero value places nothing: with
// --cgroups-per-qos=false the runtime picks the cgroup.
type Layout struct {
	// Root is --cgroup-root, "/" by default.
	Root string
	// PerQOS is --cgroups-per-qos.
	PerQOS bool
}

// KubepodsName is the cgroup every pod cgroup sits under.
const KubepodsName = "kubepods"

// PodParent returns the pod's cgroup as a path relative to each hierarchy's
// mount point ("/kubepods/besteffort/pod<uid>"), the CgroupParent a
// cgroupfs-driver runtime expects; "" when pods get no cgroup of their own.
// A UID that could not be one path element gets none either: joined as
// text, "x/../pod<other>" would name another pod's cgroup. The sources
// admit no such pod; an orphan whose runtime labels carry one is removed
// from the runtime without its cgroup being looked for.
func (l Layout) PodParent(uid types.UID, qos v1.PodQOSClass) string {
	if !l.PerQOS || !poduid.Valid(uid) {
		return ""
	}
	root := l.Root
	if root == "" {
		root = "/"
	}
	name := "pod" + string(uid)
	switch qos {
	case v1.PodQOSGuaranteed:
		return path.Join(root, KubepodsName, name)
	case v1.PodQOSBestEffort:
		return path.Join(root, KubepodsName, "besteffort", name)
	}
	return path.Join(root, KubepodsName, "burstable", name)
}
