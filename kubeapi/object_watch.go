package kubeapi

import (
	"bytes"
	"context"
	"errors"
	"maps"
	"sync"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// objectWatch is one object's reflector and its latest state. It is the
// reflector's store: a store of at most one object, holding only the data
// pods read.
type objectWatch struct {
	ref      ObjectRef
	onChange func(ObjectRef)
	users    int // guarded by Objects.mu
	stop     context.CancelFunc
	// synced is closed by the first list; failed by the first error
	// before it.
	synced, failed chan struct{}

	mu      sync.Mutex
	listed  bool
	refused bool // failed is closed
	found   bool
	data    map[string][]byte
	lastErr error
}

func newObjectWatch(ref ObjectRef, onChange func(ObjectRef)) *objectWatch {
	return &objectWatch{ref: ref, onChange: onChange, synced: make(chan struct{}), failed: make(chan struct{})}
}

// start runs the reflector until close or ctx's end. The field selector
// names the object, which is what the Node authorizer allows.
func (w *objectWatch) start(ctx context.Context, client kubernetes.Interface) {
	ctx, w.stop = context.WithCancel(ctx)
	selector := fields.OneTermEqualSelector("metadata.name", w.ref.Name).String()
	var expected runtime.Object
	var list func(context.Context, metav1.ListOptions) (runtime.Object, error)
	var watchFn func(context.Context, metav1.ListOptions) (watch.Interface, error)
	switch w.ref.Kind {
	case SecretObject:
		api := client.CoreV1().Secrets(w.ref.Namespace)
		expected = &v1.Secret{}
		list = func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) { return api.List(ctx, o) }
		watchFn = api.Watch
	default:
		api := client.CoreV1().ConfigMaps(w.ref.Namespace)
		expected = &v1.ConfigMap{}
		list = func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) { return api.List(ctx, o) }
		watchFn = api.Watch
	}
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			o.FieldSelector = selector
			obj, err := list(ctx, o)
			w.noteErr(err)
			return obj, err
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.FieldSelector = selector
			wi, err := watchFn(ctx, o)
			w.noteErr(err)
			return wi, err
		},
	}
	r := cache.NewReflectorWithOptions(cache.ToListWatcherWithWatchListSemantics(lw, client), expected, w,
		cache.ReflectorOptions{Name: w.ref.String()})
	objectWatches.Inc()
	go func() {
		defer objectWatches.Dec()
		r.RunWithContext(ctx)
	}()
}

func (w *objectWatch) close() { w.stop() }

func (w *objectWatch) noteErr(err error) {
	if err == nil || errors.Is(err, context.Canceled) {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.lastErr = err
	if !w.listed && !w.refused {
		w.refused = true
		close(w.failed)
	}
}

func (w *objectWatch) lastError() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.lastErr == nil {
		return errors.New("no answer from the API server yet")
	}
	return w.lastErr
}

func (w *objectWatch) current() (map[string][]byte, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.data, w.found
}

// set records the object's state and reports a change of its data to
// onChange once the first list is in.
func (w *objectWatch) set(found bool, data map[string][]byte, list bool) {
	w.mu.Lock()
	changed := w.listed && (found != w.found || !maps.EqualFunc(data, w.data, bytes.Equal))
	w.found, w.data = found, data
	first := list && !w.listed
	if list {
		w.listed = true
	}
	w.mu.Unlock()
	if first {
		close(w.synced)
	}
	if changed {
		objectChanges.Inc()
		w.onChange(w.ref)
	}
}

// dataOf returns an object's data if it is the watched one. The API server
// filters by name; a client that does not (a fake one) must not make
// another object look like this one.
func (w *objectWatch) dataOf(obj any) (map[string][]byte, bool) {
	switch o := obj.(type) {
	case *v1.ConfigMap:
		if w.ref.Kind != ConfigMapObject || o.Name != w.ref.Name || o.Namespace != w.ref.Namespace {
			return nil, false
		}
		data := make(map[string][]byte, len(o.Data)+len(o.BinaryData))
		for k, v := range o.Data {
			data[k] = []byte(v)
		}
		maps.Copy(data, o.BinaryData)
		return data, true
	case *v1.Secret:
		if w.ref.Kind != SecretObject || o.Name != w.ref.Name || o.Namespace != w.ref.Namespace {
			return nil, false
		}
		if o.Data == nil {
			return map[string][]byte{}, true
		}
		return o.Data, true
	}
	return nil, false
}

// The reflector's store (cache.ReflectorStore).

func (w *objectWatch) Add(obj any) error {
	if data, ok := w.dataOf(obj); ok {
		w.set(true, data, false)
	}
	return nil
}

func (w *objectWatch) Update(obj any) error { return w.Add(obj) }

func (w *objectWatch) Delete(obj any) error {
	if _, ok := w.dataOf(obj); ok {
		w.set(false, nil, false)
	}
	return nil
}

func (w *objectWatch) Replace(list []any, _ string) error {
	for _, obj := range list {
		if data, ok := w.dataOf(obj); ok {
			w.set(true, data, true)
			return nil
		}
	}
	w.set(false, nil, true)
	return nil
}

func (w *objectWatch) Resync() error { return nil }

var _ cache.ReflectorStore = (*objectWatch)(nil)
