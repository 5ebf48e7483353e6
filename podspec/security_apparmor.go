package podspec

import (
	"errors"
	"fmt"
	"strings"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// appArmorProfileOf is the AppArmor profile a container runs under: its
// own field, else the deprecated per-container annotation, else the pod's
// field. The annotation comes before the pod's field because a static pod
// written for an older kubelet carries only the annotation, which the API
// server never turned into a field for it. Nil leaves the choice to the
// runtime.
func appArmorProfileOf(pod *v1.Pod, spec *v1.Container) *v1.AppArmorProfile {
	if sc := spec.SecurityContext; sc != nil && sc.AppArmorProfile != nil {
		return sc.AppArmorProfile
	}
	if value, ok := pod.Annotations[v1.DeprecatedAppArmorBetaContainerAnnotationKeyPrefix+spec.Name]; ok {
		if p := annotationAppArmorProfile(value); p != nil {
			return p
		}
	}
	if psc := pod.Spec.SecurityContext; psc != nil {
		return psc.AppArmorProfile
	}
	return nil
}

// annotationAppArmorProfile reads an annotation's value: runtime/default,
// unconfined or localhost/<name>; anything else is no profile.
func annotationAppArmorProfile(value string) *v1.AppArmorProfile {
	switch {
	case value == v1.DeprecatedAppArmorBetaProfileRuntimeDefault:
		return &v1.AppArmorProfile{Type: v1.AppArmorProfileTypeRuntimeDefault}
	case value == v1.DeprecatedAppArmorBetaProfileNameUnconfined:
		return &v1.AppArmorProfile{Type: v1.AppArmorProfileTypeUnconfined}
	case strings.HasPrefix(value, v1.DeprecatedAppArmorBetaProfileNamePrefix):
		name := strings.TrimPrefix(value, v1.DeprecatedAppArmorBetaProfileNamePrefix)
		return &v1.AppArmorProfile{Type: v1.AppArmorProfileTypeLocalhost, LocalhostProfile: &name}
	}
	return nil
}

// appArmorForRuntime gives the profile both ways the CRI carries it: the
// SecurityProfile, and the deprecated string older runtimes read.
func appArmorForRuntime(p *v1.AppArmorProfile) (*runtimeapi.SecurityProfile, string) {
	switch p.Type {
	case v1.AppArmorProfileTypeRuntimeDefault:
		return &runtimeapi.SecurityProfile{ProfileType: runtimeapi.SecurityProfile_RuntimeDefault},
			v1.DeprecatedAppArmorBetaProfileRuntimeDefault
	case v1.AppArmorProfileTypeLocalhost:
		var name string
		if p.LocalhostProfile != nil {
			name = *p.LocalhostProfile
		}
		return &runtimeapi.SecurityProfile{ProfileType: runtimeapi.SecurityProfile_Localhost, LocalhostRef: name},
			v1.DeprecatedAppArmorBetaProfileNamePrefix + name
	}
	return &runtimeapi.SecurityProfile{ProfileType: runtimeapi.SecurityProfile_Unconfined},
		v1.DeprecatedAppArmorBetaProfileNameUnconfined
}

// CheckAppArmor says why the node cannot run the AppArmor profiles the pod
// asks for, or nil. Only a profile other than Unconfined needs AppArmor on
// the host; a host without it refuses such a pod at admission
// ("Cannot enforce AppArmor: ..."), rather than each container failing
// later in the runtime.
func CheckAppArmor(pod *v1.Pod, node *Node) error {
	if !appArmorRequired(pod) {
		return nil
	}
	if !node.Security.AppArmor {
		return errors.New("AppArmor is not enabled on the host")
	}
	for _, list := range [][]v1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range list {
			p := appArmorProfileOf(pod, &list[i])
			if p != nil && p.Type == v1.AppArmorProfileTypeLocalhost &&
				(p.LocalhostProfile == nil || strings.TrimSpace(*p.LocalhostProfile) == "") {
				return fmt.Errorf("invalid empty AppArmor profile name for container %s", list[i].Name)
			}
		}
	}
	return nil
}

// appArmorRequired reports whether any field or annotation of the pod asks
// for a profile other than Unconfined.
func appArmorRequired(pod *v1.Pod) bool {
	confines := func(p *v1.AppArmorProfile) bool { return p != nil && p.Type != v1.AppArmorProfileTypeUnconfined }
	if psc := pod.Spec.SecurityContext; psc != nil && confines(psc.AppArmorProfile) {
		return true
	}
	for _, list := range [][]v1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range list {
			if sc := list[i].SecurityContext; sc != nil && confines(sc.AppArmorProfile) {
				return true
			}
		}
	}
	for key, value := range pod.Annotations {
		if strings.HasPrefix(key, v1.DeprecatedAppArmorBetaContainerAnnotationKeyPrefix) &&
			value != v1.DeprecatedAppArmorBetaProfileNameUnconfined {
			return true
		}
	}
	return false
}
