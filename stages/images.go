package stages

import (
	"errors"
	"fmt"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

var (
	// ErrImageNeverPull: the image is absent and the policy forbids pulling.
	ErrImageNeverPull = errors.New("image not present with pull policy Never")
	// ErrImageBackoff: an earlier pull failed and the retry is not due.
	ErrImageBackoff = errors.New("back-off pulling image")
)

// DefaultPullPolicy is Always for an image without a tag or tagged
// :latest (and no digest), IfNotPresent otherwise.
func DefaultPullPolicy(image string) v1.PullPolicy {
	if strings.Contains(image, "@") {
		return v1.PullIfNotPresent
	}
	name := image[strings.LastIndex(image, "/")+1:]
	tag, ok := "", false
	if i := strings.LastIndex(name, ":"); i >= 0 {
		tag, ok = name[i+1:], true
	}
	if !ok || tag == "latest" {
		return v1.PullAlways
	}
	return v1.PullIfNotPresent
}

// ensureImage makes the container's image present per its pull policy and
// returns the image reference to create the container from.
func (s *ContainerStage) ensureImage(w *Work, spec *v1.Container, sandboxCfg *runtimeapi.PodSandboxConfig) (string, error) {
	ctx, image, name := w.Context(), spec.Image, spec.Name
	policy := spec.ImagePullPolicy
	if policy == "" {
		policy = DefaultPullPolicy(image)
	}
	if policy != v1.PullAlways {
		img, err := s.Images.ImageStatus(ctx, image)
		if err != nil {
			w.Sync.setWaiting(name, "ImageInspectError", err.Error())
			return "", fmt.Errorf("inspect image %s: %w", image, err)
		}
		if img != nil {
			return img.GetId(), nil
		}
		if policy == v1.PullNever {
			w.Sync.setWaiting(name, "ErrImageNeverPull",
				fmt.Sprintf("Container image %q is not present with pull policy of Never", image))
			return "", fmt.Errorf("%s: %w", image, ErrImageNeverPull)
		}
	}
	now := time.Now()
	if rem := w.Sync.ImagePull.Wait(image, now); rem > 0 {
		w.Sync.setWaiting(name, "ImagePullBackOff", fmt.Sprintf("Back-off pulling image %q", image))
		w.RequeueAfter(rem)
		return "", fmt.Errorf("%s: %w", image, ErrImageBackoff)
	}
	ref, err := s.Images.PullImage(ctx, image, nil, sandboxCfg)
	if err != nil {
		w.Sync.ImagePull.Next(image, now)
		w.Sync.setWaiting(name, "ErrImagePull", err.Error())
		return "", fmt.Errorf("pull image %s: %w", image, err)
	}
	w.Sync.ImagePull.Reset(image)
	return ref, nil
}
