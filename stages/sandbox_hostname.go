package stages

import (
	"fmt"

	v1 "k8s.io/api/core/v1"

	"github.com/podline/podline/podspec"
)

// checkSandbox refuses a sandbox whose hostname cannot be set (an FQDN
// longer than the kernel's nodename, a hostname that is no DNS label), as
// the kubelet refuses it, and one that asks for isolation this node does
// not give (podspec.CheckIsolation): the pod waits in ContainerCreating
// and retries.
func (s *SandboxStage) checkSandbox(pod *v1.Pod) error {
	_, err := podspec.SandboxHostname(pod, s.Node)
	if err == nil {
		err = podspec.CheckIsolation(pod)
	}
	if err != nil {
		recorderOr(s.Events).PodEvent(pod, "", v1.EventTypeWarning, "FailedCreatePodSandBox",
			"Failed to create pod sandbox: "+err.Error())
		return fmt.Errorf("create sandbox: %w", err)
	}
	return nil
}
