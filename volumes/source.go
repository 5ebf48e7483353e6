package volumes

import (
	"context"
	"fmt"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/podline/podline/internal/delay"
	"github.com/podline/podline/kubeapi"
)

// Source fills configMap, secret, downwardAPI and projected volumes and
// keeps them current; it is the volume stage's stages.ContentSource. It
// is safe for concurrent use on different pods.
type Source struct {
	client      kubernetes.Interface // nil without an API server
	allocatable v1.ResourceList
	now         func() time.Time
	// objects watches what volumes show; reads caches what only
	// environments read. Both are nil without an API server.
	objects *kubeapi.Objects
	reads   *objectCache
	// timers holds one token timer per pod; tokenQueue runs it.
	timers     timerQueue
	tokenQueue *delay.Queue[types.UID]
	notify     func(types.UID)

	mu    sync.Mutex
	pods  map[types.UID]*podContent
	users map[kubeapi.ObjectRef]map[types.UID]struct{}
}

// timerQueue is the part of delay.Queue the token timers use.
type timerQueue interface {
	After(key types.UID, d time.Duration)
	Cancel(key types.UID)
}

// New returns a Source that reads objects and requests tokens through
// client; with a nil client (no API server) it fills downwardAPI volumes
// and projections of downward API fields alone, and fails the others.
// allocatable is the node's: a resourceFieldRef limit that the container
// and pod leave unset reads as the node's allocatable. The map is kept,
// not copied, and must not change afterwards.
func New(client kubernetes.Interface, allocatable v1.ResourceList) *Source {
	s := &Source{
		client: client, allocatable: allocatable, now: time.Now,
		notify: func(types.UID) {},
		pods:   map[types.UID]*podContent{},
		users:  map[kubeapi.ObjectRef]map[types.UID]struct{}{},
	}
	if client != nil {
		s.objects = kubeapi.NewObjects(client, s.objectChanged)
		s.reads = newObjectCache(time.Now)
	}
	s.tokenQueue = delay.New(s.tokenDue)
	s.timers = s.tokenQueue
	return s
}

// OnStale sets what is called when a pod's content volumes fall stale:
// it must start a sync pass of the pod (whose volume stage then asks
// Stale). Set it before the first SetUp.
func (s *Source) OnStale(fn func(uid types.UID)) { s.notify = fn }

// Run runs the token timers and keeps the watches open until ctx ends.
func (s *Source) Run(ctx context.Context) {
	var wg sync.WaitGroup
	if s.objects != nil {
		wg.Go(func() { s.objects.Run(ctx) })
	}
	s.tokenQueue.Run(ctx)
	wg.Wait()
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
// From the first SetUp of a pod until Release, the objects its volumes
// show are watched and its tokens timed, and a change makes it Stale.
func (s *Source) SetUp(ctx context.Context, pod *v1.Pod, vol *v1.Volume, dir string) error {
	kind, ok := kindOf(vol)
	if !ok {
		return fmt.Errorf("%w: volume %q is not a configMap, secret, downwardAPI or projected volume", ErrUnsupported, vol.Name)
	}
	// Taken before the files are resolved: a label that changes while
	// they are written leaves the record behind, so the pod stays stale.
	digest, hasDownward := downwardDigest(pod, vol, s.allocatable)
	changed, err := s.setUp(ctx, kind, pod, vol, dir)
	switch {
	case err != nil:
		setupsTotal[kind][resultError].Inc()
	case changed:
		setupsTotal[kind][resultWritten].Inc()
	default:
		setupsTotal[kind][resultUnchanged].Inc()
	}
	if err == nil {
		s.wrote(pod, vol, digest, hasDownward)
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
