package stages

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podline/podline/podspec"
)

// verifySecurity is the last look at a container's security before it is
// created: a context the runtime cannot be given as asked, or a container
// that must not run as root but would, ends CreateContainerConfigError
// with a Failed event, as the kubelet reports them, and is retried after
// the back-off. cfg gets the image's user where the runtime needs one.
func (s *ContainerStage) verifySecurity(w *Work, act StartAction, imageRef string, cfg *runtimeapi.ContainerConfig) error {
	err := checkContainerUser(w.Context(), s.Images, w.Pod, act.Spec, imageRef, cfg.GetLinux().GetSecurityContext())
	if err != nil {
		name := act.Spec.Name
		w.Sync.setWaiting(name, "CreateContainerConfigError", err.Error())
		recorderOr(s.Events).PodEvent(w.Pod, name, v1.EventTypeWarning, "Failed", "Error: "+err.Error())
	}
	return err
}

// checkContainerUser checks spec's security context (CheckContainerSecurity,
// VerifyRunAsNonRoot) and names the image's user in sec (WithImageUser).
// The image's user is asked of the runtime only when the answer matters
// (NeedsImageUser), so most containers cost no extra call.
func checkContainerUser(ctx context.Context, images ImageRuntime, pod *v1.Pod, spec *v1.Container, imageRef string,
	sec *runtimeapi.LinuxContainerSecurityContext) error {
	if err := podspec.CheckContainerSecurity(pod, spec); err != nil {
		return err
	}
	var img *runtimeapi.Image
	if podspec.NeedsImageUser(pod, spec) {
		var err error
		if img, err = images.ImageStatus(ctx, imageRef); err != nil {
			return fmt.Errorf("read the user of image %s: %w", imageRef, err)
		}
	}
	if err := podspec.VerifyRunAsNonRoot(pod, spec, img); err != nil {
		return err
	}
	podspec.WithImageUser(sec, img)
	return nil
}
