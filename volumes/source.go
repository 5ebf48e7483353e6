package volumes

import (
	"context"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
)

// Source fills configMap, secret, downwardAPI and projected volumes from
// the API server; it is the volume stage's stages.ContentSource. Between
// calls it keeps only a few seconds of configMap and secret reads (and a
// token already in the volume), and it is safe for concurrent use on
// different directories.
type Source struct {
	client      kubernetes.Interface
	allocatable v1.ResourceList
	now         func() time.Time
	objects     *objectCache
}

// New returns a Source that reads objects and requests tokens through
// client. allocatable is the node's: a resourceFieldRef limit that the
// container and pod leave unset reads as the node's allocatable. The map
// is kept, not copied, and must not change afterwards.
func New(client kubernetes.Interface, allocatable v1.ResourceList) *Source {
	return &Source{client: client, allocatable: allocatable, now: time.Now, objects: newObjectCache(time.Now)}
}

// Handles reports whether vol is a volume Source fills.
func Handles(vol *v1.Volume) bool {
	_, ok := kindOf(vol)
	return ok
}

// SetUp writes vol's files into dir. Secret and projected volumes get a
// tmpfs mounted on dir first. Unchanged content leaves dir as it is; new
// content replaces the old in one atomic step. A missing object or key
// that the volume marks optional is no error: its files are left out.
func (s *Source) SetUp(ctx context.Context, pod *v1.Pod, vol *v1.Volume, dir string) error {
	kind, ok := kindOf(vol)
	if !ok {
		return fmt.Errorf("%w: volume %q is not a configMap, secret, downwardAPI or projected volume", ErrUnsupported, vol.Name)
	}
	changed, err := s.setUp(ctx, kind, pod, vol, dir)
	switch {
	case err != nil:
		setupsTotal[kind][resultError].Inc()
	case changed:
		setupsTotal[kind][resultWritten].Inc()
	default:
		setupsTotal[kind][resultUnchanged].Inc()
	}
	return err
}

func (s *Source) setUp(ctx context.Context, kind volumeKind, pod *v1.Pod, vol *v1.Volume, dir string) (bool, error) {
	// Secrets and tokens stay in memory, as on other nodes.
	if err := prepareDir(dir, kind == kindSecret || kind == kindProjected); err != nil {
		return false, err
	}
	var pl payload
	var err error
	switch kind {
	case kindConfigMap:
		pl, err = s.configMapPayload(ctx, pod, vol.ConfigMap)
	case kindSecret:
		pl, err = s.secretPayload(ctx, pod, vol.Secret)
	case kindDownwardAPI:
		pl, err = s.downwardAPIVolume(pod, vol.DownwardAPI)
	case kindProjected:
		pl, err = s.projectedPayload(ctx, pod, vol.Projected, dir)
	}
	if err != nil {
		return false, err
	}
	w := writer{gid: fsGroup(pod), now: s.now}
	return w.write(dir, pl)
}

func kindOf(vol *v1.Volume) (volumeKind, bool) {
	switch {
	case vol.ConfigMap != nil:
		return kindConfigMap, true
	case vol.Secret != nil:
		return kindSecret, true
	case vol.DownwardAPI != nil:
		return kindDownwardAPI, true
	case vol.Projected != nil:
		return kindProjected, true
	}
	return 0, false
}
