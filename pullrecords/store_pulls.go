package pullrecords

import (
	"context"
	"fmt"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
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
	s.pullsByRepo[ref.Repository()]++
	s.mu.Unlock()
	if err := s.persistIntent(key); err != nil {
		s.mu.Lock()
		it.pulls--
		s.pullsByRepo[ref.Repository()]--
		if s.pullsByRepo[ref.Repository()] <= 0 {
			delete(s.pullsByRepo, ref.Repository())
		}
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

func (s *Store) pullEnded(ref credentials.Reference) {
	key := ref.String()
	s.mu.Lock()
	if it := s.intents[key]; it != nil {
		it.pulls = max(it.pulls-1, 0)
		it.leftover = false
	}
	if n := s.pullsByRepo[ref.Repository()] - 1; n > 0 {
		s.pullsByRepo[ref.Repository()] = n
	} else {
		delete(s.pullsByRepo, ref.Repository())
	}
	s.mu.Unlock()
	if err := s.persistIntent(key); err != nil {
		s.log.Warn("cannot remove an image pull intent", "image", key, "err", err)
	}
}

// ImageLister lists the runtime's images.
type ImageLister interface {
	ListImages(ctx context.Context, filter *runtimeapi.ImageFilter) ([]*runtimeapi.Image, error)
}

// ResolveIntents settles the intents a previous run left, as the kubelet
// does when it starts: an image that is on the node although its pull
// never recorded an end (podline died during it, or before it could
// write the record) gets a record with no credentials, so every pod
// verifies it, and its intent goes. Intents of images not on the node
// stay until a pull of the image ends. It lists the runtime's images once,
// and only if there is such an intent.
func (s *Store) ResolveIntents(ctx context.Context, images ImageLister) error {
	s.mu.RLock()
	pending := map[string]bool{}
	for key, it := range s.intents {
		if it.leftover {
			pending[key] = true
		}
	}
	s.mu.RUnlock()
	if len(pending) == 0 {
		return nil
	}
	list, err := images.ListImages(ctx, nil)
	if err != nil {
		return fmt.Errorf("list images to settle %d image pull intents: %w", len(pending), err)
	}
	for _, img := range list {
		for _, name := range append(img.GetRepoTags(), img.GetRepoDigests()...) {
			key := canonical(name)
			if !pending[key] {
				continue
			}
			ref, err := credentials.ParseReference(key)
			if err != nil {
				continue
			}
			if err := s.merge(img.GetId(), ref.Repository(), nil); err != nil {
				s.log.Warn("cannot record an image whose pull was cut short", "image", key, "imageRef", img.GetId(), "err", err)
				continue
			}
			delete(pending, key)
			s.log.Info("image pulled before a restart without a record; pods will verify it", "image", key, "imageRef", img.GetId())
			s.mu.Lock()
			if it := s.intents[key]; it != nil {
				it.leftover = false
			}
			s.mu.Unlock()
			if err := s.persistIntent(key); err != nil {
				s.log.Warn("cannot remove an image pull intent", "image", key, "err", err)
			}
		}
	}
	return nil
}

// merge adds creds for repo to the record of imageRef, and writes the
// record if that changed it.
func (s *Store) merge(imageRef, repo string, creds *kubeletv1alpha1.ImagePullCredentials) error {
	s.mu.Lock()
	rec, changed := mergeCredentials(s.records[imageRef], imageRef, repo, creds, s.now())
	if changed {
		s.records[imageRef] = rec
	}
	s.mu.Unlock()
	if !changed {
		return nil
	}
	return s.persistRecord(imageRef)
}

// persistRecord writes the record of imageRef as it is in memory now.
func (s *Store) persistRecord(imageRef string) error {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	name := fileName(imageRef)
	s.mu.RLock()
	rec := s.records[imageRef]
	s.mu.RUnlock()
	var err error
	if rec == nil {
		err = removeDurably(s.pulledDir, name)
	} else {
		err = writeAtomic(s.pulledDir, name, encodeRecord(rec))
	}
	if err != nil {
		writeErrors.Inc()
		return err
	}
	s.mu.Lock()
	delete(s.unreadable, name)
	s.mu.Unlock()
	s.updateGauges()
	return nil
}

// persistIntent makes the intent file of image (a canonical name) match
// memory: present while a pull is under way or a leftover waits, absent
// otherwise.
func (s *Store) persistIntent(image string) error {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	s.mu.RLock()
	it := s.intents[image]
	var want bool
	var file string
	if it != nil {
		want, file = it.wanted(), it.file
	}
	s.mu.RUnlock()
	var err error
	switch {
	case want && file == "":
		file = fileName(image)
		if err = writeAtomic(s.pullingDir, file, encodeIntent(image)); err != nil {
			file = ""
		}
	case !want && file != "":
		if err = removeDurably(s.pullingDir, file); err == nil {
			file = ""
		}
	}
	s.mu.Lock()
	if it := s.intents[image]; it != nil {
		it.file = file
		if !it.wanted() && it.file == "" {
			delete(s.intents, image)
		}
	}
	s.mu.Unlock()
	if err != nil {
		writeErrors.Inc()
		return err
	}
	s.updateGauges()
	return nil
}
