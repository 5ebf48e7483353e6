package cgroupfs

import (
	"fmt"
	"path"
	"strings"

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
	// Driver names the cgroups; "" is cgroupfs.
	Driver Driver
	// ScopePrefix is, under the systemd driver, the prefix of the
	// runtime's container scope units (ScopePrefix); "" is containerd's.
	ScopePrefix string
}

// KubepodsName is the cgroup every pod cgroup sits under.
const KubepodsName = "kubepods"

// Validate says what is wrong with the layout: an unknown driver, or under
// the systemd driver a root element that cannot be part of a unit name.
func (l Layout) Validate() error {
	if l.Driver != "" {
		if _, err := ParseDriver(string(l.Driver)); err != nil {
			return err
		}
	}
	if l.Driver.systemd() {
		for _, c := range l.rootComponents() {
			if !validUnitComponent(c) {
				return fmt.Errorf("cgroup root %q: %q cannot be part of a systemd unit name (letters, digits, '-', '_', '.', ':')", l.Root, c)
			}
		}
	}
	return nil
}

// rootComponents are the elements of --cgroup-root, taken from "/" as the
// kubelet takes it: none for "/".
func (l Layout) rootComponents() []string {
	root := path.Clean("/" + l.Root)
	if root == "/" {
		return nil
	}
	return strings.Split(root[1:], "/")
}

// cgroup is the path of the cgroup named by components below the root,
// relative to each hierarchy's mount point.
func (l Layout) cgroup(components ...string) string {
	all := append(l.rootComponents(), components...)
	if l.Driver.systemd() {
		return systemdCgroup(all)
	}
	return "/" + path.Join(all...)
}

// rootLevels are the cgroups of --cgroup-root, outermost first: "/a",
// "/a/b" (systemd: "/a.slice", "/a.slice/a-b.slice").
func (l Layout) rootLevels() []string {
	comps := l.rootComponents()
	out := make([]string, 0, len(comps))
	for i := range comps {
		if l.Driver.systemd() {
			out = append(out, systemdCgroup(comps[:i+1]))
		} else {
			out = append(out, "/"+path.Join(comps[:i+1]...))
		}
	}
	return out
}

// qosComponents are the components below the root of a QoS class's
// cgroup; Guaranteed pods sit in kubepods itself.
func qosComponents(qos v1.PodQOSClass) []string {
	switch qos {
	case v1.PodQOSGuaranteed:
		return []string{KubepodsName}
	case v1.PodQOSBestEffort:
		return []string{KubepodsName, besteffortName}
	}
	return []string{KubepodsName, burstableName}
}

// PodParent returns the pod's cgroup as a path relative to each hierarchy's
// mount point, what the kubelet sends the runtime as CgroupParent:
// "/kubepods/besteffort/pod<uid>" with the cgroupfs driver,
// "/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod<uid>.slice"
// (the UID's "-" as "_") with systemd's; "" when pods get no cgroup of
// their own. A UID that could not be one path element gets none either:
// joined as text, "x/../pod<other>" would name another pod's cgroup. The
// sources admit no such pod; an orphan whose runtime labels carry one is
// removed from the runtime without its cgroup being looked for.
func (l Layout) PodParent(uid types.UID, qos v1.PodQOSClass) string {
	if !l.PerQOS || !poduid.Valid(uid) {
		return ""
	}
	return l.cgroup(append(qosComponents(qos), "pod"+string(uid))...)
}

// ContainerCgroup returns the cgroup the runtime makes for a container
// (a sandbox's too) in the pod cgroup parent: parent/<id> with the
// cgroupfs driver, parent/<prefix>-<id>.scope with systemd's, where runc
// puts it for containerd ("cri-containerd-<id>.scope") and CRI-O
// ("crio-<id>.scope"). "" when parent is.
func (l Layout) ContainerCgroup(parent, id string) string {
	if parent == "" {
		return ""
	}
	if !l.Driver.systemd() {
		return parent + "/" + id
	}
	prefix := l.ScopePrefix
	if prefix == "" {
		prefix = scopePrefixContainerd
	}
	return parent + "/" + prefix + "-" + id + ".scope"
}
