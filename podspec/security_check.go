package podspec

import (
	"path/filepath"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
)

// CheckContainerSecurity refuses a security context that cannot be given
// to the runtime as asked; the error wraps ErrConfig. The API server
// refuses most of these already; a static pod is only checked here.
func CheckContainerSecurity(pod *v1.Pod, spec *v1.Container) error {
	psc, csc := pod.Spec.SecurityContext, spec.SecurityContext
	if psc == nil {
		psc = &v1.PodSecurityContext{}
	}
	if csc == nil {
		csc = &v1.SecurityContext{}
	}
	if p := psc.SupplementalGroupsPolicy; p != nil && *p != v1.SupplementalGroupsPolicyMerge && *p != v1.SupplementalGroupsPolicyStrict {
		return configErrorf("unsupported supplementalGroupsPolicy: %s", *p)
	}
	if p := firstSet(csc.SeccompProfile, psc.SeccompProfile); p != nil && p.Type == v1.SeccompProfileTypeLocalhost {
		if p.LocalhostProfile == nil || *p.LocalhostProfile == "" {
			return configErrorf("localhostProfile must be set if seccompProfile type is Localhost")
		}
		if !descendingPath(*p.LocalhostProfile) {
			return configErrorf("seccompProfile localhostProfile %q must be a relative path without '..'", *p.LocalhostProfile)
		}
	}
	if p := appArmorProfileOf(pod, spec); p != nil {
		switch p.Type {
		case v1.AppArmorProfileTypeRuntimeDefault, v1.AppArmorProfileTypeUnconfined:
		case v1.AppArmorProfileTypeLocalhost:
			if p.LocalhostProfile == nil {
				return configErrorf("missing localhost apparmor profile name")
			}
		default:
			return configErrorf("unknown apparmor profile type: %q", p.Type)
		}
	}
	// An unmasked /proc is only safe in a user namespace of the pod's own
	// (the API server allows Unmasked only with hostUsers: false), and
	// podline runs every pod in the host's: root in the container could
	// write /proc/sysrq-trigger.
	if csc.ProcMount != nil && *csc.ProcMount == v1.UnmaskedProcMount {
		return configErrorf("procMount Unmasked needs a user namespace of the pod's own (hostUsers: false), which podline does not create")
	}
	return nil
}

// descendingPath reports whether p stays beneath the directory it is
// joined to.
func descendingPath(p string) bool {
	return !filepath.IsAbs(p) && !slices.Contains(strings.Split(filepath.ToSlash(p), "/"), "..")
}
