package stages

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podline/podline/credentials"
	"github.com/podline/podline/podspec"
	"github.com/podline/podline/pullrecords"
)

var (
	// ErrImageNeverPull: the image is absent and the policy forbids pulling.
	ErrImageNeverPull = errors.New("image not present with pull policy Never")
	// ErrImageBackoff: an earlier pull failed and the retry is not due.
	ErrImageBackoff = errors.New("back-off pulling image")
	// ErrInvalidImageName: the image cannot be parsed as a reference.
	ErrInvalidImageName = errors.New("invalid image name")
	// ErrImagePull: the runtime (or the registry behind it) refused the pull.
	ErrImagePull = errors.New("image pull failed")
)

// imagePullResync is how soon a pod whose image pull failed, or is backing
// off, is looked at again: the kubelet's pod worker retries a failed sync
// after 10 s. So ErrImagePull shows for 10 s after each refused pull and
// ImagePullBackOff for the rest of the image's back-off, as on other nodes;
// the pass's own step back-off (from 0.5 s) would show ErrImagePull for
// half a second and drift from the image's back-off.
const imagePullResync = 10 * time.Second

// waitingOnImage: the container waits for its image's back-off, which
// schedules its own retry; the pass did not fail.
func waitingOnImage(err error) bool {
	return errors.Is(err, ErrImagePull) || errors.Is(err, ErrImageBackoff)
}

// PullSecretSource reads the secrets a pod names in imagePullSecrets.
type PullSecretSource interface {
	PullSecret(ctx context.Context, namespace, name string) (*v1.Secret, error)
}

// ensureImage makes the container's image present per its pull policy and
// returns the image reference to create the container from. An image
// already on the node is used only if the pod may use it (see
// ImagePuller.MayUse); otherwise it is pulled with the pod's credentials,
// so the registry checks them. Its events, waiting reasons and messages
// are the kubelet's.
func (s *ContainerStage) ensureImage(w *Work, spec *v1.Container, sandboxCfg *runtimeapi.PodSandboxConfig) (string, error) {
	ctx, image, name := w.Context(), spec.Image, spec.Name
	pod, ev := w.Pod, recorderOr(s.Events)
	if _, err := credentials.ParseReference(image); err != nil {
		msg := fmt.Sprintf("Failed to apply default image tag %q: couldn't parse image name %q: %v", image, image, err)
		w.Sync.setWaiting(name, "InvalidImageName", msg)
		ev.PodEvent(pod, name, v1.EventTypeWarning, "InspectFailed", msg)
		ev.PodEvent(pod, name, v1.EventTypeWarning, "Failed", "Error: InvalidImageName")
		return "", fmt.Errorf("%s: %w", image, ErrInvalidImageName)
	}
	policy := spec.ImagePullPolicy
	if policy == "" {
		policy = podspec.DefaultPullPolicy(image)
	}
	// The pod's credentials for the image, read once and only when
	// needed: by the check of an image on the node whose record names
	// secrets, or by a pull.
	lookup := sync.OnceValues(func() ([]credentials.Credential, error) {
		return credentials.Lookup(image, s.pullSecrets(ctx, w))
	})
	podCreds := func() []credentials.Credential {
		creds, _ := lookup() // a bad secret presents nothing; the pull reports it
		return creds
	}
	verifying := false
	if policy != v1.PullAlways {
		img, err := s.Images.ImageStatus(ctx, image)
		if err != nil {
			w.Sync.setWaiting(name, "ImageInspectError", err.Error())
			return "", fmt.Errorf("inspect image %s: %w", image, err)
		}
		if img == nil && policy == v1.PullNever {
			return "", s.neverPull(w, name, image)
		}
		if img != nil {
			switch s.pulls().MayUse(image, img, policy, podCreds) {
			case pullrecords.Use:
				ev.PodEvent(pod, name, v1.EventTypeNormal, "Pulled", s.presentMessage(image))
				return img.GetId(), nil
			case pullrecords.Refuse:
				// As absent: a pod learns nothing of images it may not use.
				return "", s.neverPull(w, name, image)
			}
			verifying = true
		}
	}
	// The back-off is per pod and image, as the kubelet keys it: PodSync
	// is the pod's.
	if rem := w.Sync.ImagePull.Wait(image, time.Now()); rem > 0 {
		msg := fmt.Sprintf("Back-off pulling image %q", image)
		ev.PodEvent(pod, name, v1.EventTypeNormal, "BackOff", msg)
		if why := w.Sync.ImagePull.Why(image); why != "" {
			msg += ": " + why
		}
		w.Sync.setWaiting(name, "ImagePullBackOff", msg)
		ev.PodEvent(pod, name, v1.EventTypeWarning, "Failed", "Error: ImagePullBackOff")
		w.RequeueAfter(min(rem, imagePullResync))
		return "", fmt.Errorf("%s: %w", image, ErrImageBackoff)
	}
	creds, err := lookup()
	if err != nil {
		return "", s.pullFailed(w, name, image, err)
	}
	ev.PodEvent(pod, name, v1.EventTypeNormal, "Pulling", fmt.Sprintf("Pulling image %q", image))
	start := time.Now()
	res := s.pulls().Pull(ctx, PullRequest{
		Image: image, Credentials: creds, SandboxConfig: sandboxCfg,
		// A verifying pull must reach the registry, image present or not.
		IfAbsent: policy != v1.PullAlways && !verifying,
	})
	if res.Err != nil {
		if ctx.Err() != nil && isPullCanceled(res.Err) {
			// The pass was superseded: nothing failed that a retry should
			// wait for.
			return "", fmt.Errorf("pull image %s: %w", image, res.Err)
		}
		return "", s.pullFailed(w, name, image, res.Err)
	}
	w.Sync.ImagePull.Reset(image)
	if !res.Pulled {
		ev.PodEvent(pod, name, v1.EventTypeNormal, "Pulled", s.presentMessage(image))
		return res.ImageRef, nil
	}
	ev.PodEvent(pod, name, v1.EventTypeNormal, "Pulled", pulledMessage(image, res, time.Since(start)))
	return res.ImageRef, nil
}

// presentMessage is the kubelet's Pulled event for an image the pod found
// on the node: with the check of credentials on, it says the pod may use
// it.
func (s *ContainerStage) presentMessage(image string) string {
	if s.pulls().Verifies() {
		return fmt.Sprintf("Container image %q already present on machine and can be accessed by the pod", image)
	}
	return fmt.Sprintf("Container image %q already present on machine", image)
}

// neverPull: the image is absent, or present but not for this pod, and
// the policy forbids pulling. The kubelet words both alike.
func (s *ContainerStage) neverPull(w *Work, name, image string) error {
	pod, ev := w.Pod, recorderOr(s.Events)
	msg := fmt.Sprintf("Container image %q is not present with pull policy of Never", image)
	w.Sync.setWaiting(name, "ErrImageNeverPull", msg)
	ev.PodEvent(pod, name, v1.EventTypeWarning, "ErrImageNeverPull", msg)
	ev.PodEvent(pod, name, v1.EventTypeWarning, "Failed", "Error: ErrImageNeverPull")
	return fmt.Errorf("%s: %w", image, ErrImageNeverPull)
}

// pulledMessage is the kubelet's Pulled event: the pull's own time and the
// time this pod waited, slot and shared pull included. A pod that joined a
// pull already under way counts only the part it waited through.
func pulledMessage(image string, res PullResult, waited time.Duration) string {
	waited = waited.Truncate(time.Millisecond)
	pull := min(res.PullTime.Truncate(time.Millisecond), waited)
	return fmt.Sprintf("Successfully pulled image %q in %v (%v including waiting). Image size: %d bytes.", image, pull, waited, res.Size)
}

// pullFailed records a failed pull: ErrImagePull with the runtime's words
// in the status and a Failed event, and the pod's back-off for the image,
// whose waiting message repeats them.
func (s *ContainerStage) pullFailed(w *Work, name, image string, err error) error {
	pod, ev := w.Pod, recorderOr(s.Events)
	msg := err.Error()
	w.Sync.ImagePull.NextBecause(image, time.Now(), "ErrImagePull: "+msg)
	w.RequeueAfter(min(w.Sync.ImagePull.Delay(image), imagePullResync))
	w.Sync.setWaiting(name, "ErrImagePull", msg)
	ev.PodEvent(pod, name, v1.EventTypeWarning, "Failed", fmt.Sprintf("Failed to pull image %q: %s", image, msg))
	ev.PodEvent(pod, name, v1.EventTypeWarning, "Failed", "Error: ErrImagePull")
	return fmt.Errorf("pull image %s: %w: %w", image, ErrImagePull, err)
}

// pullSecrets reads the pod's image pull secrets. One that cannot be read
// is left out with a warning, and the pull goes ahead without it, as on
// other nodes: the registry may not need it.
func (s *ContainerStage) pullSecrets(ctx context.Context, w *Work) []*v1.Secret {
	pod := w.Pod
	var out []*v1.Secret
	var failed []string
	for _, ref := range pod.Spec.ImagePullSecrets {
		if ref.Name == "" {
			continue // the API accepts empty names; they name nothing
		}
		if s.PullSecrets == nil {
			failed = append(failed, ref.Name)
			continue
		}
		sec, err := s.PullSecrets.PullSecret(ctx, pod.Namespace, ref.Name)
		if err != nil {
			failed = append(failed, ref.Name)
			continue
		}
		out = append(out, sec)
	}
	if len(failed) > 0 {
		recorderOr(s.Events).PodEvent(pod, "", v1.EventTypeWarning, "FailedToRetrieveImagePullSecret",
			fmt.Sprintf("Unable to retrieve some image pull secrets (%s); attempting to pull the image may not succeed.", strings.Join(failed, ", ")))
	}
	return out
}

// pulls is the stage's puller; a stage built without one (tests) gets a
// serializing one of its own, the kubelet's default.
func (s *ContainerStage) pulls() *ImagePuller {
	s.pullerOnce.Do(func() {
		if s.Pulls == nil {
			s.Pulls = NewImagePuller(s.Images, nil, true, 0)
		}
	})
	return s.Pulls
}
