package pullrecords

import (
	"context"
	"fmt"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podline/podline/credentials"
)

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
			if it := s.intents[key]; it != nil && it.leftover {
				it.leftover = false
				s.countIntentLocked(ref.Repository(), -1)
			}
			s.mu.Unlock()
			if err := s.persistIntent(key); err != nil {
				s.log.Warn("cannot remove an image pull intent", "image", key, "err", err)
			}
		}
	}
	return nil
}
