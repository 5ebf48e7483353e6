package podspec

import (
	"path/filepath"
	"slices"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// Security is what the node adds to the confinement each pod asks for.
type Security struct {
	// SeccompDefault is --seccomp-default: a container whose pod and
	// container name no seccomp profile gets the runtime's default one
	// instead of none.
	SeccompDefault bool
	// AppArmor reports that the host enforces AppArmor profiles. Without
	// it a pod asking for a profile other than Unconfined is refused at
	// admission (AppArmorRejection).
	AppArmor bool
	// ExtraMaskedPaths are hidden from containers on top of
	// DefaultMaskedPaths: the thermal_throttle directories of this host's
	// CPUs.
	ExtraMaskedPaths []string
}

// DefaultMaskedPaths and DefaultReadonlyPaths are what a container with the
// default procMount may not see and may not write. containerd clears its
// own defaults and applies only the lists it is given (an empty list
// reaches it as no list at all), so a container is confined by exactly
// these, the lists Docker and the kubelet use.
var (
	DefaultMaskedPaths = []string{
		"/proc/asound", "/proc/acpi", "/proc/interrupts", "/proc/kcore", "/proc/keys",
		"/proc/latency_stats", "/proc/timer_list", "/proc/timer_stats", "/proc/sched_debug",
		"/proc/scsi", "/sys/firmware", "/sys/devices/virtual/powercap",
	}
	DefaultReadonlyPaths = []string{
		"/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger",
	}
)

// SeccompRoot is where Localhost seccomp profiles are read from:
// <root-dir>/seccomp, as the kubelet reads them from its root directory.
func (n *Node) SeccompRoot() string { return filepath.Join(n.RootDir, "seccomp") }

// containerSecurity is the container's security context as the runtime
// takes it. A container-level field wins over the pod-level one; the
// groups, the groups policy and the seccomp and AppArmor fallbacks come
// from the pod. It expects a spec CheckContainerSecurity accepts. The
// result shares no slice with the spec.
func containerSecurity(pod *v1.Pod, spec *v1.Container, node *Node) *runtimeapi.LinuxContainerSecurityContext {
	psc := pod.Spec.SecurityContext
	if psc == nil {
		psc = &v1.PodSecurityContext{}
	}
	csc := spec.SecurityContext
	if csc == nil {
		csc = &v1.SecurityContext{}
	}
	sec := &runtimeapi.LinuxContainerSecurityContext{
		NamespaceOptions:         namespaceOptions(pod),
		RunAsUser:                int64Value(firstSet(csc.RunAsUser, psc.RunAsUser)),
		RunAsGroup:               int64Value(firstSet(csc.RunAsGroup, psc.RunAsGroup)),
		SupplementalGroups:       podGroups(psc),
		SupplementalGroupsPolicy: groupsPolicy(psc.SupplementalGroupsPolicy),
		Privileged:               isTrue(csc.Privileged),
		ReadonlyRootfs:           isTrue(csc.ReadOnlyRootFilesystem),
		// Unset allows escalation: the API server defaults nothing here.
		NoNewPrivs:   csc.AllowPrivilegeEscalation != nil && !*csc.AllowPrivilegeEscalation,
		Capabilities: capabilities(csc.Capabilities),
		Seccomp:      seccompProfile(psc.SeccompProfile, csc.SeccompProfile, node),
	}
	if csc.ProcMount == nil || *csc.ProcMount != v1.UnmaskedProcMount {
		sec.MaskedPaths = append(slices.Clip(DefaultMaskedPaths), node.Security.ExtraMaskedPaths...)
		sec.ReadonlyPaths = slices.Clone(DefaultReadonlyPaths)
	}
	if p := appArmorProfileOf(pod, spec); p != nil {
		sec.Apparmor, sec.ApparmorProfile = appArmorForRuntime(p)
	}
	return sec
}

// podGroups are the supplemental groups of the pod's sandbox and every
// container: fsGroup first, so files a volume gives the fsGroup are the
// pod's to read, then supplementalGroups in their order.
func podGroups(psc *v1.PodSecurityContext) []int64 {
	var groups []int64
	if psc.FSGroup != nil {
		groups = append(groups, *psc.FSGroup)
	}
	return append(groups, psc.SupplementalGroups...)
}

// groupsPolicy maps supplementalGroupsPolicy; unset is Merge (the groups
// the image's /etc/group gives the user are kept), and so is a value
// CheckContainerSecurity refuses.
func groupsPolicy(p *v1.SupplementalGroupsPolicy) runtimeapi.SupplementalGroupsPolicy {
	if p != nil && *p == v1.SupplementalGroupsPolicyStrict {
		return runtimeapi.SupplementalGroupsPolicy_Strict
	}
	return runtimeapi.SupplementalGroupsPolicy_Merge
}

func capabilities(c *v1.Capabilities) *runtimeapi.Capability {
	if c == nil {
		return nil
	}
	out := &runtimeapi.Capability{}
	for _, name := range c.Add {
		out.AddCapabilities = append(out.AddCapabilities, string(name))
	}
	for _, name := range c.Drop {
		out.DropCapabilities = append(out.DropCapabilities, string(name))
	}
	return out
}

// seccompProfile is the container's profile, else the pod's, else the
// node's default: RuntimeDefault with --seccomp-default, Unconfined
// without. It is always named: containerd reads a missing profile as its
// own unset_seccomp_profile setting, which the kubelet never leaves to it.
func seccompProfile(pod, container *v1.SeccompProfile, node *Node) *runtimeapi.SecurityProfile {
	p := container
	if p == nil {
		p = pod
	}
	switch {
	case p == nil && node.Security.SeccompDefault:
		return &runtimeapi.SecurityProfile{ProfileType: runtimeapi.SecurityProfile_RuntimeDefault}
	case p == nil:
		return &runtimeapi.SecurityProfile{ProfileType: runtimeapi.SecurityProfile_Unconfined}
	case p.Type == v1.SeccompProfileTypeRuntimeDefault:
		return &runtimeapi.SecurityProfile{ProfileType: runtimeapi.SecurityProfile_RuntimeDefault}
	case p.Type == v1.SeccompProfileTypeLocalhost:
		var name string
		if p.LocalhostProfile != nil {
			name = *p.LocalhostProfile
		}
		return &runtimeapi.SecurityProfile{ProfileType: runtimeapi.SecurityProfile_Localhost,
			LocalhostRef: filepath.Join(node.SeccompRoot(), name)}
	}
	return &runtimeapi.SecurityProfile{ProfileType: runtimeapi.SecurityProfile_Unconfined}
}

func firstSet[T any](ps ...*T) *T {
	for _, p := range ps {
		if p != nil {
			return p
		}
	}
	return nil
}

func int64Value(v *int64) *runtimeapi.Int64Value {
	if v == nil {
		return nil
	}
	return &runtimeapi.Int64Value{Value: *v}
}
