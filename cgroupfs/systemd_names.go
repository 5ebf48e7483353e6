package cgroupfs

import (
	"fmt"
	"path"
	"strings"

	"github.com/podline/podline/internal/poduid"
)

// The kubelet's systemd names. A cgroup name is a list of components
// (--cgroup-root's elements, "kubepods", the QoS class, "pod<uid>"); the
// systemd driver joins them with "-" into one slice unit name, each
// component's own "-" turned into "_" so that "-" marks the levels only:
// {"podline-e2e", "kubepods", "burstable", "pod1-2"} is the unit
// "podline_e2e-kubepods-burstable-pod1_2.slice". systemd places a slice
// under the slice named by its name's prefix, so that unit's cgroup is
// /podline_e2e.slice/podline_e2e-kubepods.slice/
// podline_e2e-kubepods-burstable.slice/podline_e2e-kubepods-burstable-pod1_2.slice.

const sliceSuffix = ".slice"

// escapeSystemd makes one component part of a slice name.
func escapeSystemd(component string) string { return strings.ReplaceAll(component, "-", "_") }

// systemdCgroup is the cgroup path of the slice made of components: "/"
// for none, as the root slice "-.slice" is the root cgroup.
func systemdCgroup(components []string) string {
	if len(components) == 0 {
		return "/"
	}
	var b strings.Builder
	prefix := ""
	for _, c := range components {
		prefix += escapeSystemd(c)
		b.WriteString("/")
		b.WriteString(prefix)
		b.WriteString(sliceSuffix)
		prefix += "-"
	}
	return b.String()
}

// expandSlice is systemd's placement of a slice unit: the cgroup path of
// "a-b-c.slice" is /a.slice/a-b.slice/a-b-c.slice. It refuses names that
// are no slice ("x.scope"), hold "/", or have an empty level ("a--b",
// "-a"); "-.slice" is the root.
func expandSlice(unit string) (string, error) {
	name, ok := strings.CutSuffix(unit, sliceSuffix)
	if !ok || name == "" || strings.Contains(name, "/") {
		return "", fmt.Errorf("%q is not a slice unit name", unit)
	}
	if name == "-" {
		return "/", nil
	}
	levels := strings.Split(name, "-")
	for _, l := range levels {
		if l == "" {
			return "", fmt.Errorf("%q is not a slice unit name", unit)
		}
	}
	return systemdCgroup(levels), nil
}

// parentSlice is the slice unit a slice's cgroup sits in: "-.slice" for a
// top-level one.
func parentSlice(cgroup string) string {
	dir := path.Dir(cgroup)
	if dir == "/" {
		return "-.slice"
	}
	return path.Base(dir)
}

// validUnitComponent reports whether a --cgroup-root element can be part of
// a unit name: systemd takes letters, digits and ":_.\" there, and "-",
// which becomes "_".
func validUnitComponent(c string) bool {
	if c == "" {
		return false
	}
	for i := 0; i < len(c); i++ {
		switch b := c[i]; {
		case 'a' <= b && b <= 'z', 'A' <= b && b <= 'Z', '0' <= b && b <= '9':
		case b == '-', b == '_', b == '.', b == ':':
		default:
			return false
		}
	}
	return true
}

// isSystemdPodCgroup accepts the cgroup of a pod slice under any cgroup
// root: the slice's systemd placement, ending in the components
// "kubepods"[, "burstable"|"besteffort"], "pod<uid>" with a valid UID.
func isSystemdPodCgroup(parent string) bool {
	unit := path.Base(parent)
	if expanded, err := expandSlice(unit); err != nil || expanded != parent {
		return false
	}
	levels := strings.Split(strings.TrimSuffix(unit, sliceSuffix), "-")
	n := len(levels)
	uid, ok := strings.CutPrefix(levels[n-1], "pod")
	if !ok || !poduid.Valid(uid) || n < 2 {
		return false
	}
	if levels[n-2] == KubepodsName {
		return true
	}
	return n >= 3 && (levels[n-2] == burstableName || levels[n-2] == besteffortName) && levels[n-3] == KubepodsName
}
