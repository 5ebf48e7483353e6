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

// PullFailed ends the intent of a pull that failed or was abandoned.
// left is the ID of the image the pull left on the node all the same, ""
// if none: a runtime may store the image and then fail, and containerd
// answers Canceled to a pull cancelled after it created the image. That
// image gets a record with no credentials, as an intent settled at start
// does, so that every pod verifies it instead of taking it for preloaded.
// If the record cannot be written, the intent stays as PullUncertain
// leaves it.
func (s *Store) PullFailed(ref credentials.Reference, left string) {
	if left != "" {
		if err := s.merge(left, ref.Repository(), nil); err != nil {
			s.log.Error("cannot record the image a failed pull left; its repository will be verified until a pull of it ends or podline restarts",
				"image", ref.String(), "imageRef", left, "err", err)
			s.PullUncertain(ref)
			return
		}
		s.log.Info("a failed image pull left the image on the node; pods will verify it", "image", ref.String(), "imageRef", left)
	}
	s.pullEnded(ref)
}

// PullUncertain ends a pull that failed when the runtime could not say
// whether it left the image on the node. Its intent stays, in memory and
// on disk, as a podline that died during the pull leaves it: no image of
// the repository counts as preloaded until a later pull of the image ends
// or a restart settles the intent against the runtime's images.
func (s *Store) PullUncertain(ref credentials.Reference) {
	key, repo := ref.String(), ref.Repository()
	s.mu.Lock()
	if it := s.intents[key]; it != nil {
		it.pulls = max(it.pulls-1, 0)
		if !it.leftover {
			it.leftover = true
			s.countIntentLocked(repo, 1)
		}
	}
	s.countIntentLocked(repo, -1)
	s.mu.Unlock()
	if err := s.persistIntent(key); err != nil {
		s.log.Warn("cannot keep an image pull intent", "image", key, "err", err)
	}
}

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
