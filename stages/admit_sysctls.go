package stages

import (
	v1 "k8s.io/api/core/v1"

	"github.com/podline/podline/sysctl"
)

// sysctlRejection refuses a pod that sets a sysctl the node does not
// allow it (the first one, in the pod's order). A nil allowlist allows
// none.
func sysctlRejection(pod *v1.Pod, allowed *sysctl.Allowlist) *Rejection {
	sc := pod.Spec.SecurityContext
	if sc == nil {
		return nil
	}
	for _, s := range sc.Sysctls {
		if err := allowed.Check(s.Name, pod.Spec.HostNetwork, pod.Spec.HostIPC); err != nil {
			return &Rejection{Reason: "SysctlForbidden", Message: "forbidden sysctl: " + err.Error()}
		}
	}
	return nil
}
