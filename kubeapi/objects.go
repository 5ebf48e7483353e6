package kubeapi

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/VictoriaMetrics/metrics"
	"k8s.io/client-go/kubernetes"
)

var (
	// objectWatches is the number of configMaps and secrets watched: it
	// follows the objects pods use, not the pods.
	objectWatches = metrics.NewGauge(`podline_api_object_watches`, nil)
	// objectChanges counts changes of watched objects' data.
	objectChanges = metrics.NewCounter(`podline_api_object_changes_total`)
)

// ObjectKind is a kind of object a pod's volumes name: configMap or secret.
type ObjectKind uint8

const (
	ConfigMapObject ObjectKind = iota
	SecretObject
)

func (k ObjectKind) String() string {
	if k == SecretObject {
		return "secret"
	}
	return "configMap"
}

// ObjectRef names one configMap or secret.
type ObjectRef struct {
	Kind      ObjectKind
	Namespace string
	Name      string
}

func (r ObjectRef) String() string {
	return fmt.Sprintf("%s %q in namespace %q", r.Kind, r.Name, r.Namespace)
}

// ErrNotWatched: Get was asked for an object nobody acquired.
var ErrNotWatched = errors.New("not watched")

// DefaultSyncWait bounds how long Get waits for a new watch's first list
// when the API server does not answer. Past it the caller fails and
// retries later while the watch goes on trying: waiting longer would hold
// a volume worker while the API server is away.
const DefaultSyncWait = 10 * time.Second

// Objects keeps the configMaps and secrets that pods' volumes show in
// memory, current through one watch per object: opened when the first
// user acquires the object, closed when the last one releases it.
//
// One watch per object, not one per namespace or kind, because it is what
// a node may do: the Node authorizer lets a node get, list and watch (by
// name) only the configMaps and secrets of pods bound to it. However many
// pods share an object, it costs one list (or a watch with initial events)
// when first acquired and one open watch after that: no request per pod
// and none per period. Reads are from memory.
//
// onChange is called, outside any lock, once per change to the data of an
// object after its first list: not for the first list itself, not for a
// relist that brings the same data, and not for changes to metadata alone.
type Objects struct {
	client   kubernetes.Interface
	onChange func(ObjectRef)
	// SyncWait bounds Get's wait for a new watch's first list.
	SyncWait time.Duration

	ctx    context.Context
	cancel context.CancelFunc

	mu    sync.Mutex
	items map[ObjectRef]*objectWatch
}

// NewObjects returns an empty store; watches start as objects are
// acquired and all stop with Run's context. onChange may be nil.
func NewObjects(client kubernetes.Interface, onChange func(ObjectRef)) *Objects {
	if onChange == nil {
		onChange = func(ObjectRef) {}
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Objects{
		client: client, onChange: onChange, SyncWait: DefaultSyncWait,
		ctx: ctx, cancel: cancel, items: make(map[ObjectRef]*objectWatch),
	}
}

// Run returns when ctx ends, having closed every watch; objects acquired
// before Run are watched from the moment they are acquired.
func (o *Objects) Run(ctx context.Context) {
	<-ctx.Done()
	o.cancel()
}

// Acquire counts one more user of ref, opening its watch for the first.
func (o *Objects) Acquire(ref ObjectRef) {
	o.mu.Lock()
	defer o.mu.Unlock()
	w := o.items[ref]
	if w == nil {
		w = newObjectWatch(ref, o.onChange)
		o.items[ref] = w
		w.start(o.ctx, o.client)
	}
	w.users++
}

// Release counts one user of ref less, closing its watch after the last.
func (o *Objects) Release(ref ObjectRef) {
	o.mu.Lock()
	defer o.mu.Unlock()
	w := o.items[ref]
	if w == nil {
		return
	}
	if w.users--; w.users <= 0 {
		delete(o.items, ref)
		w.close()
	}
}

// Get returns ref's data, waiting (within ctx and SyncWait) for its watch's
// first list; found is false when the object does not exist. Until that
// list is in, an error from the API server is returned at once (a refusal
// is typical: a pod bound a moment ago may not be in the Node authorizer's
// graph yet), and the watch retries with back-off meanwhile. ref must be
// acquired. The map is shared: read only.
func (o *Objects) Get(ctx context.Context, ref ObjectRef) (data map[string][]byte, found bool, err error) {
	o.mu.Lock()
	w := o.items[ref]
	o.mu.Unlock()
	if w == nil {
		return nil, false, fmt.Errorf("%s: %w", ref, ErrNotWatched)
	}
	timer := time.NewTimer(o.SyncWait)
	defer timer.Stop()
	select {
	case <-w.synced:
	case <-w.failed:
	case <-ctx.Done():
		return nil, false, ctx.Err()
	case <-timer.C:
		return nil, false, fmt.Errorf("watch of %s not synced after %s: %w", ref, o.SyncWait, w.lastError())
	}
	select {
	case <-w.synced:
		data, found = w.current()
		return data, found, nil
	default:
		return nil, false, fmt.Errorf("watch of %s: %w", ref, w.lastError())
	}
}

// Peek returns ref's data if someone watches it and its first list is in,
// without waiting; ok is false otherwise.
func (o *Objects) Peek(ref ObjectRef) (data map[string][]byte, found, ok bool) {
	o.mu.Lock()
	w := o.items[ref]
	o.mu.Unlock()
	if w == nil {
		return nil, false, false
	}
	select {
	case <-w.synced:
		data, found = w.current()
		return data, found, true
	default:
		return nil, false, false
	}
}

// Watched returns the number of objects watched now.
func (o *Objects) Watched() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.items)
}
