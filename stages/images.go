package stages

import (
	"errors"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podline/podline/podspec"
)

var (
	// ErrImageNeverPull: the image is absent and the policy forbids pulling.
	ErrImageNeverPull = errors.New("image not present with pull policy Never")
	// ErrImageBackoff: an earlier pull failed and the retry is not due.
	ErrImageBackoff = errors.New("back-off pulling image")
)

// ensureImage makes the container's image present per its pull policy and
// returns the image reference to create the container from.
func (s *ContainerStage) ensureImage(w *Work, spec *v1.Container, sandboxCfg *runtimeapi.PodSandboxConfig) (string, error) {
	ctx, image, name := w.Context(), spec.Image, spec.Name
	pod, ev := w.Pod, recorderOr(s.Events)
	policy := spec.ImagePullPolicy
	if policy == "" {
		policy = podspec.DefaultPullPolicy(image)
	}
	if policy != v1.PullAlways {
		img, err := s.Images.ImageStatus(ctx, image)
		if err != nil {
			w.Sync.setWaiting(name, "ImageInspectError", err.Error())
			return "", fmt.Errorf("inspect image %s: %w", image, err)
		}
		if img != nil {
			ev.PodEvent(pod, name, v1.EventTypeNormal, "Pulled", fmt.Sprintf("Container image %q already present on machine", image))
			return img.GetId(), nil
		}
		if policy == v1.PullNever {
			msg := fmt.Sprintf("Container image %q is not present with pull policy of Never", image)
			w.Sync.setWaiting(name, "ErrImageNeverPull", msg)
			ev.PodEvent(pod, name, v1.EventTypeWarning, "ErrImageNeverPull", msg)
			return "", fmt.Errorf("%s: %w", image, ErrImageNeverPull)
		}
	}
	now := time.Now()
	if rem := w.Sync.ImagePull.Wait(image, now); rem > 0 {
		msg := fmt.Sprintf("Back-off pulling image %q", image)
		w.Sync.setWaiting(name, "ImagePullBackOff", msg)
		ev.PodEvent(pod, name, v1.EventTypeNormal, "BackOff", msg)
		w.RequeueAfter(rem)
		return "", fmt.Errorf("%s: %w", image, ErrImageBackoff)
	}
	ev.PodEvent(pod, name, v1.EventTypeNormal, "Pulling", fmt.Sprintf("Pulling image %q", image))
	ref, err := s.Images.PullImage(ctx, image, nil, sandboxCfg)
	if err != nil {
		w.Sync.ImagePull.Next(image, now)
		w.Sync.setWaiting(name, "ErrImagePull", err.Error())
		ev.PodEvent(pod, name, v1.EventTypeWarning, "Failed", fmt.Sprintf("Failed to pull image %q: %v", image, err))
		ev.PodEvent(pod, name, v1.EventTypeWarning, "Failed", "Error: ErrImagePull")
		return "", fmt.Errorf("pull image %s: %w", image, err)
	}
	w.Sync.ImagePull.Reset(image)
	ev.PodEvent(pod, name, v1.EventTypeNormal, "Pulled",
		fmt.Sprintf("Successfully pulled image %q in %s", image, time.Since(now).Round(time.Millisecond)))
	return ref, nil
}
