package podspec

import (
	"path/filepath"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// managedMounts are the files podline itself gives a container, after its
// volume mounts: the pod's hosts file at /etc/hosts and the instance's
// termination log. The container stage writes both before it creates the
// container (see HostsFile and TerminationLogPath). Both are writable, as
// the kubelet mounts them.
func managedMounts(pod *v1.Pod, act Instance, podIPs []string, node *Node) ([]*runtimeapi.Mount, error) {
	// The hostname is checked for every container, whether it gets the
	// hosts file or not: a pod whose hostname fails gets no container.
	if _, _, err := PodHostname(pod, node.DNS.ClusterDomain); err != nil {
		return nil, ConfigError(err)
	}
	var out []*runtimeapi.Mount
	if MountsHostsFile(pod, act.Spec, podIPs) {
		if _, err := hostAliasEntries(pod.Spec.HostAliases); err != nil {
			return nil, ConfigError(err)
		}
		out = append(out, &runtimeapi.Mount{ContainerPath: EtcHosts, HostPath: HostsFilePath(node, pod.UID)})
	}
	if MountsTerminationLog(act.Spec) {
		out = append(out, &runtimeapi.Mount{
			// A relative path is taken from the container's root.
			ContainerPath: filepath.Clean("/" + act.Spec.TerminationMessagePath),
			HostPath:      TerminationLogPath(node, pod.UID, act.Spec.Name, act.Attempt),
		})
	}
	return out, nil
}
