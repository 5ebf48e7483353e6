package pleg

import (
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podline/podline/cri"
)

// nsTime turns a CRI timestamp into a time; 0 means unset. The CRI says
// nanoseconds, but runtimes have sent seconds (containerd #10740), so the
// unit is read from the magnitude.
func nsTime(ns int64) time.Time {
	return normalizeTimestamp(ns)
}

// PodIdentity reads the pod UID, name and namespace from the labels podline
// put on a sandbox or container. ok is false for objects podline did not make.
func PodIdentity(labels map[string]string) (uid types.UID, name, namespace string, ok bool) {
	u := labels[cri.LabelPodUID]
	if u == "" {
		return "", "", "", false
	}
	return types.UID(u), labels[cri.LabelPodName], labels[cri.LabelPodNamespace], true
}

func sandboxState(s runtimeapi.PodSandboxState) SandboxState {
	if s == runtimeapi.PodSandboxState_SANDBOX_READY {
		return SandboxReady
	}
	return SandboxNotReady
}

// SandboxFromList converts a ListPodSandbox entry. It has no IPs.
func SandboxFromList(sb *runtimeapi.PodSandbox) *Sandbox {
	return &Sandbox{
		ID:        sb.GetId(),
		Attempt:   sb.GetMetadata().GetAttempt(),
		State:     sandboxState(sb.GetState()),
		CreatedAt: nsTime(sb.GetCreatedAt()),
	}
}

// SandboxFromStatus converts a PodSandboxStatus answer, IPs included.
func SandboxFromStatus(st *runtimeapi.PodSandboxStatus) *Sandbox {
	sb := &Sandbox{
		ID:        st.GetId(),
		Attempt:   st.GetMetadata().GetAttempt(),
		State:     sandboxState(st.GetState()),
		CreatedAt: nsTime(st.GetCreatedAt()),
	}
	if ip := st.GetNetwork().GetIp(); ip != "" {
		sb.IPs = append(sb.IPs, ip)
		for _, extra := range st.GetNetwork().GetAdditionalIps() {
			sb.IPs = append(sb.IPs, extra.GetIp())
		}
	}
	return sb
}

func containerState(s runtimeapi.ContainerState) ContainerState {
	switch s {
	case runtimeapi.ContainerState_CONTAINER_CREATED:
		return ContainerCreated
	case runtimeapi.ContainerState_CONTAINER_RUNNING:
		return ContainerRunning
	case runtimeapi.ContainerState_CONTAINER_EXITED:
		return ContainerExited
	}
	return ContainerUnknown
}

// recordedGrace reads the grace period recorded on a container; nil when
// there is none, or it is not a count of seconds.
func recordedGrace(annotations map[string]string) *int64 {
	v, ok := annotations[cri.AnnotationTerminationGrace]
	if !ok {
		return nil
	}
	secs, err := strconv.ParseInt(v, 10, 64)
	if err != nil || secs < 0 {
		return nil
	}
	return &secs
}

// ContainerFromList converts a ListContainers entry: state and identity,
// but no exit code or times beyond creation.
func ContainerFromList(c *runtimeapi.Container) *Container {
	out := &Container{
		ID:        c.GetId(),
		SandboxID: c.GetPodSandboxId(),
		Name:      c.GetMetadata().GetName(),
		Attempt:   c.GetMetadata().GetAttempt(),
		State:     containerState(c.GetState()),
		Hash:      c.GetAnnotations()[cri.AnnotationContainerHash],
		Grace:     recordedGrace(c.GetAnnotations()),
		Init:      c.GetAnnotations()[cri.AnnotationInitContainer] == "true",
		Image:     c.GetImage().GetUserSpecifiedImage(),
		ImageRef:  c.GetImageRef(),
		CreatedAt: nsTime(c.GetCreatedAt()),
	}
	if out.Image == "" {
		out.Image = c.GetImage().GetImage()
	}
	return out
}

// ContainerFromStatus converts a ContainerStatus answer. The CRI status does
// not name the sandbox, so the caller passes it.
func ContainerFromStatus(st *runtimeapi.ContainerStatus, sandboxID string) *Container {
	c := &Container{
		ID:         st.GetId(),
		SandboxID:  sandboxID,
		Name:       st.GetMetadata().GetName(),
		Attempt:    st.GetMetadata().GetAttempt(),
		State:      containerState(st.GetState()),
		Hash:       st.GetAnnotations()[cri.AnnotationContainerHash],
		Grace:      recordedGrace(st.GetAnnotations()),
		Init:       st.GetAnnotations()[cri.AnnotationInitContainer] == "true",
		Image:      st.GetImage().GetUserSpecifiedImage(),
		ImageRef:   st.GetImageRef(),
		CreatedAt:  nsTime(st.GetCreatedAt()),
		StartedAt:  nsTime(st.GetStartedAt()),
		FinishedAt: nsTime(st.GetFinishedAt()),
		ExitCode:   st.GetExitCode(),
		Reason:     st.GetReason(),
		Message:    st.GetMessage(),
		Detailed:   true,
	}
	if c.Image == "" {
		c.Image = st.GetImage().GetImage()
	}
	return c
}
