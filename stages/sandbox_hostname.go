package stages

import (
	"fmt"

	v1 "k8s.io/api/core/v1"

	"github.com/podline/podline/podspec"
)

// checkHostname refuses a sandbox whose hostname cannot be set (an FQDN
// longer than the kernel's nodename, a hostname that is no DNS label), as
// the kubelet refuses it: the pod waits in ContainerCreating and retries.
func (s *SandboxStage) checkHostname(pod *v1.Pod) error {
	if _, err := podspec.SandboxHostname(pod, s.Node); err != nil {
		recorderOr(s.Events).PodEvent(pod, "", v1.EventTypeWarning, "FailedCreatePodSandBox",
			"Failed to create pod sandbox: "+err.Error())
		return fmt.Errorf("create sandbox: %w", err)
	}
	return nil
}
