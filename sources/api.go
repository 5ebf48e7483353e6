package sources

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/VictoriaMetrics/metrics"
	"github.com/go-logr/logr"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

const (
	// apiMinHold is the least time between two snapshots. The first change
	// after a quiet spell is delivered at once; the changes that follow
	// within the hold are delivered together at its end.
	apiMinHold = 10 * time.Millisecond
	// apiMaxHold bounds how far a slow Set stretches the hold. A hold as
	// long as the last Set keeps Sets to half the source's time however big
	// the snapshot; a Set is slow mostly because the consumer pushed back,
	// and once it has caught up, waiting longer would only add latency.
	apiMaxHold = 100 * time.Millisecond
)

var (
	apiEvents = metrics.NewCounter(`podline_source_api_events_total`)
	// apiSets counts snapshots handed to the Merger; the gap to
	// podline_source_api_events_total is what coalescing saved.
	apiSets       = metrics.NewCounter(`podline_source_api_sets_total`)
	apiMirrorSets = metrics.NewCounter(`podline_source_api_mirror_sets_total`)
)

// APIConfig is what the API source needs.
type APIConfig struct {
	Client   kubernetes.Interface
	NodeName string
	// Merger must have APISource registered.
	Merger *Merger
	// Mirrors, if set, receives every mirror pod bound to the node, as a
	// whole new set each time that set changes. The pods are shared with
	// the watch cache: read them, never modify them. It runs on the
	// source's goroutine, so it must return quickly.
	Mirrors func(pods []*v1.Pod)
	Log     *slog.Logger
}

// APIWatcher is the APISource: a list and watch of the pods the scheduler
// bound to this node (field selector spec.nodeName=<node>), handed to the
// Merger as whole snapshots.
//
// Watch events only mark the snapshot dirty; one goroutine takes snapshots,
// the first change after a quiet spell at once and the rest at most every
// hold (as long as the last Set took, within apiMinHold and apiMaxHold). A
// single new pod reaches the Merger well within a millisecond of its event
// (about 0.2 ms in TestAPISourceLatency, under the race detector), and
// a burst of 1,000 costs a handful of O(n) Sets rather than 1,000.
//
// Nothing is delivered before the first full list: until then the Merger
// does not count the API source as seen, so SeenAll stays false and nothing
// the API may still want is removed from the runtime, while the pods of the
// other sources start as usual. The reflector retries an unreachable API
// server with backoff for as long as it takes.
//
// Mirror pods are the API server's copies of static pods; they are never
// run, so they are left out of the snapshots and handed to Mirrors instead.
//
// Pods are passed as the API server sent them, already defaulted and
// validated there; managed fields are dropped to save memory. An unchanged
// pod keeps its pointer from one snapshot to the next, a changed one is a
// new object, as the Merger requires.
type APIWatcher struct {
	client   kubernetes.Interface
	nodeName string
	merger   *Merger
	mirrors  func([]*v1.Pod)
	log      *slog.Logger
	store    *podStore
	buf      []*v1.Pod // owned by Run; Merger.Set does not keep it
}

// NewAPISource makes the API source. Run starts it.
func NewAPISource(c APIConfig) *APIWatcher {
	return &APIWatcher{
		client: c.Client, nodeName: c.NodeName, merger: c.Merger, mirrors: c.Mirrors,
		log:   c.Log.With("source", APISource),
		store: newPodStore(c.NodeName),
	}
}

// HasSynced reports whether the first full list has arrived.
func (s *APIWatcher) HasSynced() bool { return s.store.synced.Load() }

// Pod returns the pod or mirror pod named namespace/name as the watch last
// delivered it, status and resourceVersion included; ok is false when the
// watch has not delivered it (yet). The pod is shared with the watch cache:
// read it, never modify it. The status manager uses it as the API object's
// status before its first write, where it would otherwise read the pod.
func (s *APIWatcher) Pod(namespace, name string) (pod *v1.Pod, ok bool) {
	return s.store.get(podName{namespace, name})
}

// watchBackoff spaces the reflector's retries after a failed list or
// watch. client-go's default grows to 30 s with full jitter, so pods made
// right after an API server restart waited up to a minute; capped at 8 s
// (with up to half again as jitter) the node catches up within seconds,
// and one node's retries stay a trickle against a recovering server.
var watchBackoff = wait.Backoff{Duration: 500 * time.Millisecond, Factor: 2, Jitter: 0.5, Steps: 16, Cap: 8 * time.Second}

// Run lists, watches and delivers until ctx is done. A Set blocked on a
// lagging consumer is released by Merger.Close.
func (s *APIWatcher) Run(ctx context.Context) {
	logger := logr.FromSlogHandler(s.log.Handler())
	r := cache.NewReflectorWithOptions(s.listWatch(), &v1.Pod{}, s.store, cache.ReflectorOptions{
		Name:    "podline-api-pods",
		Logger:  &logger,
		Backoff: &watchBackoff,
	})
	var wg sync.WaitGroup
	defer wg.Wait()
	wg.Go(func() { r.RunWithContext(logr.NewContext(ctx, logger)) })
	s.deliver(ctx)
}

// listWatch asks only for the pods bound to this node; on a node among
// thousands anything else would be traffic to throw away.
func (s *APIWatcher) listWatch() cache.ListerWatcher {
	selector := fields.OneTermEqualSelector("spec.nodeName", s.nodeName).String()
	pods := s.client.CoreV1().Pods(metav1.NamespaceAll)
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			o.FieldSelector = selector
			return pods.List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.FieldSelector = selector
			return pods.Watch(ctx, o)
		},
	}
	// Lets the reflector stream the initial list (watch-list) where the
	// client supports it, and fall back to a plain list where it does not.
	return cache.ToListWatcherWithWatchListSemantics(lw, s.client)
}

// deliver turns store changes into Sets. While a hold runs, kicks wait in
// the store's channel (size 1), so any number of events becomes one Set.
func (s *APIWatcher) deliver(ctx context.Context) {
	hold := time.NewTimer(time.Hour)
	hold.Stop()
	defer hold.Stop()
	kick := s.store.kick
	for {
		select {
		case <-ctx.Done():
			return
		case <-kick:
			start := time.Now()
			if !s.flush() {
				continue
			}
			kick = nil
			hold.Reset(min(max(time.Since(start), apiMinHold), apiMaxHold))
		case <-hold.C:
			kick = s.store.kick
		}
	}
}

// flush hands what changed to Mirrors and the Merger. It reports whether it
// delivered anything.
func (s *APIWatcher) flush() bool {
	if !s.store.synced.Load() {
		return false
	}
	pods, podsChanged, mirrors, mirrorsChanged := s.store.snapshot(s.buf)
	if mirrorsChanged && s.mirrors != nil {
		apiMirrorSets.Inc()
		s.mirrors(mirrors)
	}
	if podsChanged {
		apiSets.Inc()
		s.merger.Set(APISource, pods)
	}
	clear(pods) // keep no pod alive through the reused buffer
	s.buf = pods[:0]
	return podsChanged || mirrorsChanged
}
