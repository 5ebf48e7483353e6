package pullrecords

import (
	"fmt"

	kubeletv1alpha1 "k8s.io/kubelet/config/v1alpha1"

	"github.com/podline/podline/credentials"
)

// PullStarted records the intent to pull image before the runtime is
// asked, durably: if podline dies during the pull, the next start finds
// the intent and does not take the image for a preloaded one. Every call
// must be followed by PullSucceeded or PullFailed. An error means the
// intent could not be written, and the pull must not go ahead, as the
// kubelet's does not.
func (s *Store) PullStarted(ref credentials.Reference) error {
	key := ref.String()
	s.mu.Lock()
	it := s.intents[key]
	if it == nil {
		it = &intent{}
		s.intents[key] = it
	}
	it.pulls++
	s.countIntentLocked(ref.Repository(), 1)
	s.mu.Unlock()
	if err := s.persistIntent(key); err != nil {
		s.mu.Lock()
		it.pulls--
		s.countIntentLocked(ref.Repository(), -1)
		s.mu.Unlock()
		return fmt.Errorf("Failed to record image pull intent for container image %q: %w", ref.String(), err)
	}
	return nil
}

// PullSucceeded records that image (ref) was pulled as imageRef with used,
// nil for an anonymous pull, which any pod on the node may then use. If
// the record cannot be written the intent stays, in memory and on disk,
// so that the image is verified until a restart turns the intent into a
// record without credentials, as the kubelet leaves it.
func (s *Store) PullSucceeded(ref credentials.Reference, imageRef string, used *credentials.Credential) {
	creds := &kubeletv1alpha1.ImagePullCredentials{NodePodsAccessible: true}
	if used != nil && used.Secret != "" {
		creds = &kubeletv1alpha1.ImagePullCredentials{KubernetesSecrets: SecretsOf([]credentials.Credential{*used})}
	}
	if err := s.merge(imageRef, ref.Repository(), creds); err != nil {
		s.log.Error("cannot record an image pull; the image will be verified until podline restarts", "image", ref.String(), "imageRef", imageRef, "err", err)
		return
	}
	s.pullEnded(ref)
}

// PullFailed ends an intent whose pull failed or was abandoned.
func (s *Store) PullFailed(ref credentials.Reference) { s.pullEnded(ref) }

// pullEnded ends the pull's intent, and a leftover one of the same image
// with it.
func (s *Store) pullEnded(ref credentials.Reference) {
	key, repo := ref.String(), ref.Repository()
	s.mu.Lock()
	if it := s.intents[key]; it != nil {
		it.pulls = max(it.pulls-1, 0)
		if it.leftover {
			it.leftover = false
			s.countIntentLocked(repo, -1)
		}
	}
	s.countIntentLocked(repo, -1)
	s.mu.Unlock()
	if err := s.persistIntent(key); err != nil {
		s.log.Warn("cannot remove an image pull intent", "image", key, "err", err)
	}
}
