package podspec

import (
	"fmt"
	"path/filepath"
	"strconv"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// SubPathBind is one volumeMount with a subPath: Rel inside the volume at
// Base is bound onto Target before the container is created, and the
// runtime mounts Target. The runtime never resolves a path a container
// controls: a container can plant a symlink in a volume (`ln -s / x`), and
// the next container mounting `subPath: x` would get the host's root.
type SubPathBind struct {
	Mount  string // the volumeMount's name, for errors
	Field  string // "subPath" or "subPathExpr", for errors
	Sub    string // as written (subPathExpr before expansion)
	Base   string // the volume's host directory
	Rel    string // the path inside it, expanded and checked as text
	Target string // under the pod directory, where no container writes
}

// SubPathBinds lists the subPath mounts of one container, in volumeMounts
// order. envs are the container's variables, for subPathExpr.
func SubPathBinds(pod *v1.Pod, spec *v1.Container, node *Node, envs []*runtimeapi.KeyValue) ([]SubPathBind, error) {
	var out []SubPathBind
	for i := range spec.VolumeMounts {
		vm := &spec.VolumeMounts[i]
		if vm.SubPath == "" && vm.SubPathExpr == "" {
			continue
		}
		vol := findVolume(pod, vm.Name)
		if vol == nil {
			return nil, configErrorf("volumeMount %q: no volume of that name", vm.Name)
		}
		base, ok := VolumeHostPath(node, pod, vol)
		if !ok {
			return nil, configErrorf("volume %q: unsupported volume type", vm.Name)
		}
		b := SubPathBind{Mount: vm.Name, Field: "subPath", Sub: vm.SubPath, Base: base,
			Target: filepath.Join(node.PodDir(pod.UID), "volume-subpaths", vol.Name, spec.Name, strconv.Itoa(i))}
		if vm.SubPathExpr != "" {
			b.Field, b.Sub = "subPathExpr", vm.SubPathExpr
		}
		rel := b.Sub
		if vm.SubPathExpr != "" {
			rel = expandRefs(vm.SubPathExpr, envLookup(envs))
		}
		// The text check first, as validation does it; the bind resolves
		// the rest safely.
		if err := CheckSubPath(rel); err != nil {
			return nil, b.Errorf("%q %v", rel, err)
		}
		b.Rel = filepath.Clean(rel)
		out = append(out, b)
	}
	return out, nil
}

// Errorf is a config error naming the mount and its subPath field.
func (b SubPathBind) Errorf(format string, args ...any) error {
	return configErrorf("%s of volumeMount %q: %s", b.Field, b.Mount, fmt.Sprintf(format, args...))
}

func envLookup(envs []*runtimeapi.KeyValue) func(string) (string, bool) {
	return func(name string) (string, bool) {
		for i := len(envs) - 1; i >= 0; i-- {
			if envs[i].Key == name {
				return string(envs[i].Value), true
			}
		}
		return "", false
	}
}
