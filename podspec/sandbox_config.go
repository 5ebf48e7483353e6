package podspec

import (
	"maps"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podline/podline/cgroupfs"
	"github.com/podline/podline/cri"
)

// SandboxConfig builds the CRI sandbox config for a pod. The labels carry
// the pod's identity so a restarted podline can rebuild its state.
func SandboxConfig(pod *v1.Pod, attempt uint32, node *Node) *runtimeapi.PodSandboxConfig {
	cfg := &runtimeapi.PodSandboxConfig{
		Metadata: &runtimeapi.PodSandboxMetadata{
			Name: pod.Name, Namespace: pod.Namespace, Uid: string(pod.UID), Attempt: attempt,
		},
		Hostname:     podHostname(pod, node),
		LogDirectory: node.PodLogDir(pod.Namespace, pod.Name, pod.UID),
		DnsConfig:    node.DNS.ForPod(pod),
		PortMappings: portMappings(pod),
		Labels:       podLabels(pod),
		Annotations:  maps.Clone(pod.Annotations),
		Linux: &runtimeapi.LinuxPodSandboxConfig{
			CgroupParent:    node.Cgroups.PodParent(pod.UID, cgroupfs.QOSClass(pod)),
			SecurityContext: sandboxSecurity(pod),
		},
	}
	if sc := pod.Spec.SecurityContext; sc != nil {
		if len(sc.Sysctls) > 0 {
			cfg.Linux.Sysctls = make(map[string]string, len(sc.Sysctls))
			for _, s := range sc.Sysctls {
				cfg.Linux.Sysctls[s.Name] = s.Value
			}
		}
	}
	return cfg
}

// podLabels are the pod's labels plus the identity labels.
func podLabels(pod *v1.Pod) map[string]string {
	l := make(map[string]string, len(pod.Labels)+3)
	maps.Copy(l, pod.Labels)
	l[cri.LabelPodName] = pod.Name
	l[cri.LabelPodNamespace] = pod.Namespace
	l[cri.LabelPodUID] = string(pod.UID)
	return l
}

// podHostname is SandboxHostname without its error: the sandbox stage
// checks that first and refuses the pod, so a config is never built for
// a runtime from a hostname that failed.
func podHostname(pod *v1.Pod, node *Node) string {
	h, _ := SandboxHostname(pod, node)
	return h
}

func portMappings(pod *v1.Pod) []*runtimeapi.PortMapping {
	var out []*runtimeapi.PortMapping
	for i := range pod.Spec.Containers {
		for _, p := range pod.Spec.Containers[i].Ports {
			if p.HostPort <= 0 {
				continue
			}
			out = append(out, &runtimeapi.PortMapping{
				Protocol:      protocol(p.Protocol),
				ContainerPort: p.ContainerPort,
				HostPort:      p.HostPort,
				HostIp:        p.HostIP,
			})
		}
	}
	return out
}

func protocol(p v1.Protocol) runtimeapi.Protocol {
	switch p {
	case v1.ProtocolUDP:
		return runtimeapi.Protocol_UDP
	case v1.ProtocolSCTP:
		return runtimeapi.Protocol_SCTP
	}
	return runtimeapi.Protocol_TCP
}

// namespaceOptions maps hostNetwork/hostPID/hostIPC and
// shareProcessNamespace onto CRI namespace modes. The CRI default PID mode
// is POD; Kubernetes gives each container its own unless the pod shares.
func namespaceOptions(pod *v1.Pod) *runtimeapi.NamespaceOption {
	ns := &runtimeapi.NamespaceOption{
		Network: runtimeapi.NamespaceMode_POD,
		Pid:     runtimeapi.NamespaceMode_CONTAINER,
		Ipc:     runtimeapi.NamespaceMode_POD,
	}
	if pod.Spec.HostNetwork {
		ns.Network = runtimeapi.NamespaceMode_NODE
	}
	switch {
	case pod.Spec.HostPID:
		ns.Pid = runtimeapi.NamespaceMode_NODE
	case pod.Spec.ShareProcessNamespace != nil && *pod.Spec.ShareProcessNamespace:
		ns.Pid = runtimeapi.NamespaceMode_POD
	}
	if pod.Spec.HostIPC {
		ns.Ipc = runtimeapi.NamespaceMode_NODE
	}
	return ns
}

// sandboxSecurity is the security context of the pod's sandbox: its
// namespaces, the pod-level user, group and groups (fsGroup first, as for
// every container), privileged when any container is, and always the
// runtime's default seccomp profile, which costs the pause process nothing
// and keeps it from being the pod's least confined process.
func sandboxSecurity(pod *v1.Pod) *runtimeapi.LinuxSandboxSecurityContext {
	sec := &runtimeapi.LinuxSandboxSecurityContext{
		NamespaceOptions: namespaceOptions(pod),
		Privileged:       anyPrivileged(pod),
		Seccomp:          &runtimeapi.SecurityProfile{ProfileType: runtimeapi.SecurityProfile_RuntimeDefault},
	}
	psc := pod.Spec.SecurityContext
	if psc == nil {
		return sec
	}
	sec.RunAsUser = int64Value(psc.RunAsUser)
	// The runtime refuses a group without a user (containerd: "user group
	// is specified without user"); the pause process then keeps its
	// image's user and group, and the containers get theirs.
	if psc.RunAsUser != nil {
		sec.RunAsGroup = int64Value(psc.RunAsGroup)
	}
	sec.SupplementalGroups = podGroups(psc)
	sec.SupplementalGroupsPolicy = groupsPolicy(psc.SupplementalGroupsPolicy)
	return sec
}

func anyPrivileged(pod *v1.Pod) bool {
	for _, cs := range [][]v1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range cs {
			if sc := cs[i].SecurityContext; sc != nil && sc.Privileged != nil && *sc.Privileged {
				return true
			}
		}
	}
	return false
}
