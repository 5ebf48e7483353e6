package podstatus

import (
	"context"
	"log/slog"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/workqueue"

	"github.com/podline/podline/stages"
)

// Config wires a Manager. Client and Store are required.
type Config struct {
	// Client is podline's API server connection; its QPS and burst are the
	// only rate limit on status writes.
	Client kubernetes.Interface
	Store  *stages.StatusStore
	// MirrorOf finds the mirror pod of a static pod; ok is false while it
	// has none. Nil: static pods' statuses are not sent anywhere.
	MirrorOf func(pod *v1.Pod) (namespace, name string, uid types.UID, ok bool)
	// Watched returns the API object namespace/name (a pod or a mirror pod)
	// as podline's own watch last delivered it, or false when the watch has
	// not (yet). The pod is only read. With it, the first status of a pod
	// is computed against the watch's copy of the object and sent with its
	// resourceVersion as a precondition, instead of after a read of the
	// object: one request rather than two. Nil: the object is read first.
	Watched func(namespace, name string) (*v1.Pod, bool)
	// Workers bound the requests in flight (default 4).
	Workers int
	// Resync is how often every pod is checked for a status the API server
	// has not got (default 10s): a safety net under Notify and retries.
	Resync time.Duration
	// RetryBase and RetryMax bound the per-pod back-off after a failed
	// request (defaults 250ms and 10s).
	RetryBase, RetryMax time.Duration
	// RequestTimeout bounds one API request (default 10s), so a black-holed
	// API server cannot hold a worker forever.
	RequestTimeout time.Duration
	// OutageProbe is how often, while requests fail, one pod's status is
	// sent regardless of its back-off (default 1s): the first to land
	// sends every other at once, so statuses converge within about this
	// long of the API server answering again, not RetryMax, for one
	// request per period during the outage.
	OutageProbe time.Duration
	Log         *slog.Logger
}

// Manager sends statuses from the store to the API server. Notify and
// Terminated may be called before Run and from any goroutine.
type Manager struct {
	cfg   Config
	log   *slog.Logger
	queue workqueue.TypedRateLimitingInterface[types.UID]
	quiet quietLog

	mu   sync.Mutex
	pods map[types.UID]*podState
}

// podState is what the manager knows of one pod. sent, api and gone
// describe the API object named by target and start over when the target
// changes (a static pod whose mirror pod was recreated).
type podState struct {
	target types.UID
	// sent is the store version the API object is known to hold.
	sent uint64
	// api is the API object's status as last read or written; nil: read
	// it before the next patch (or take the watch's copy, unless written).
	api *v1.PodStatus
	// written: a patch of this manager may have changed the target. The
	// watch's copy of the object may then predate that change, so it no
	// longer stands in for a read.
	written bool
	// gone: the target no longer exists; nothing more is sent to it.
	gone bool
	// gated: readiness gates held Ready false, so the gate conditions,
	// written by others, are re-read at every resync.
	gated bool
	// seenRV is the target's resourceVersion when its status was last
	// known here (a patch's answer, or the copy a patch was computed
	// against); a watched copy at another version was written by someone
	// else since, and the resync checks it for fields this node owns.
	seenRV string
	// drift: someone else changed a field this node owns (the node
	// lifecycle controller's Ready=False when it lost the node), so the
	// status is sent again although its version was.
	drift bool
	// changedAt is when the oldest change not yet sent was noticed.
	changedAt time.Time
	// final is the store version at Terminated; 0 until then.
	final   uint64
	deleted bool
}

// New returns a manager; Run starts it.
func New(cfg Config) *Manager {
	if cfg.Client == nil || cfg.Store == nil {
		panic("BUG: podstatus.New needs a Client and a Store")
	}
	if cfg.Workers < 1 {
		cfg.Workers = 4
	}
	if cfg.Resync <= 0 {
		cfg.Resync = 10 * time.Second
	}
	if cfg.RetryBase <= 0 {
		cfg.RetryBase = 250 * time.Millisecond
	}
	if cfg.RetryMax < cfg.RetryBase {
		cfg.RetryMax = max(10*time.Second, cfg.RetryBase)
	}
	if cfg.RequestTimeout <= 0 {
		cfg.RequestTimeout = 10 * time.Second
	}
	if cfg.OutageProbe <= 0 {
		cfg.OutageProbe = time.Second
	}
	log := cfg.Log
	if log == nil {
		log = slog.Default()
	}
	limiter := workqueue.NewTypedItemExponentialFailureRateLimiter[types.UID](cfg.RetryBase, cfg.RetryMax)
	return &Manager{
		cfg:   cfg,
		log:   log,
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(limiter, workqueue.TypedRateLimitingQueueConfig[types.UID]{}),
		quiet: quietLog{interval: 10 * time.Second},
		pods:  make(map[types.UID]*podState),
	}
}

// Notify marks a pod's status as changed (or the pod as deleted from the
// store). It never blocks on I/O: it is the store's OnChange hook and runs
// on pipeline workers. The mirror pod manager calls it with a static pod's
// UID when that pod's mirror pod was created, so the status follows at once.
func (m *Manager) Notify(uid types.UID) {
	m.mu.Lock()
	st := m.stateLocked(uid)
	if st.changedAt.IsZero() {
		st.changedAt = time.Now()
	}
	m.mu.Unlock()
	m.queue.Add(uid)
}

// Terminated tells the manager that a pod was torn down on the node: its
// containers and sandbox are stopped and its volumes cleaned. Once the
// status the store holds now has landed, an API pod marked for deletion
// is deleted from the API server.
func (m *Manager) Terminated(uid types.UID) {
	_, version, ok := m.cfg.Store.Status(uid)
	if !ok {
		return
	}
	m.mu.Lock()
	m.stateLocked(uid).final = version
	m.mu.Unlock()
	m.queue.Add(uid)
}

// Run sends statuses until ctx ends, then waits for its workers.
func (m *Manager) Run(ctx context.Context) {
	var wg sync.WaitGroup
	for range m.cfg.Workers {
		wg.Go(func() { m.work(ctx) })
	}
	tick := time.NewTicker(m.cfg.Resync)
	defer tick.Stop()
	probe := time.NewTicker(m.cfg.OutageProbe)
	defer probe.Stop()
	for {
		select {
		case <-ctx.Done():
			m.queue.ShutDown()
			wg.Wait()
			return
		case <-tick.C:
			m.resync()
		case <-probe.C:
			if m.quiet.failing() {
				m.probeOne()
			}
		}
	}
}

// probeOne queues one pod whose status the API server has not got, past
// its back-off: while requests fail, it is how podline learns that the API
// server answers again.
func (m *Manager) probeOne() {
	type item struct {
		uid  types.UID
		sent uint64
	}
	var items []item
	m.mu.Lock()
	for uid, st := range m.pods {
		if !st.gone && !st.deleted {
			items = append(items, item{uid, st.sent})
			if len(items) == 16 {
				break
			}
		}
	}
	m.mu.Unlock()
	for _, it := range items {
		if _, version, ok := m.cfg.Store.Status(it.uid); ok && version > it.sent {
			m.queue.Add(it.uid)
			return
		}
	}
}

func (m *Manager) work(ctx context.Context) {
	for {
		uid, shutdown := m.queue.Get()
		if shutdown {
			return
		}
		switch {
		case ctx.Err() != nil:
			// Stopping: leave the rest for the next start.
		case m.sync(ctx, uid):
			m.queue.AddRateLimited(uid)
		default:
			m.queue.Forget(uid)
		}
		m.queue.Done(uid)
	}
}

// resync re-queues every pod whose status the API server has not got:
// a version newer than the one sent, a pending final delete, a new mirror
// pod, readiness gates to re-read, or a field this node owns that someone
// else changed.
func (m *Manager) resync() {
	type item struct {
		uid, target            types.UID
		sent                   uint64
		seenRV                 string
		gone, gated, deletable bool
	}
	m.mu.Lock()
	items := make([]item, 0, len(m.pods))
	for uid, st := range m.pods {
		items = append(items, item{uid, st.target, st.sent, st.seenRV, st.gone, st.gated, st.final > 0 && !st.deleted})
	}
	m.mu.Unlock()
	unsent, drifts := 0, 0
	for _, it := range items {
		pod, status, version, ok := m.cfg.Store.Get(it.uid)
		if !ok {
			m.queue.Add(it.uid) // to be forgotten
			continue
		}
		t, ok := m.targetOf(pod)
		switch {
		case !ok:
			unsent++ // a static pod waiting for its mirror
		case t.uid != it.target:
			unsent++
			m.queue.Add(it.uid)
		case it.gone:
		case version > it.sent:
			unsent++
			m.queue.Add(it.uid)
		case it.gated || it.deletable && pod.DeletionTimestamp != nil:
			m.queue.Add(it.uid)
		case it.sent > 0 && m.drifted(it.uid, pod, status, t, it.seenRV):
			drifts++
			m.queue.Add(it.uid)
		}
	}
	if drifts > 0 {
		m.log.Info("pod statuses changed in the API server by someone else; sending them again", "pods", drifts)
	}
	unsentPods.Set(float64(unsent))
}

// stateLocked returns uid's state, creating it. m.mu must be held.
func (m *Manager) stateLocked(uid types.UID) *podState {
	st := m.pods[uid]
	if st == nil {
		st = &podState{}
		m.pods[uid] = st
	}
	return st
}

// forget drops a pod the store no longer has.
func (m *Manager) forget(uid types.UID) {
	m.mu.Lock()
	delete(m.pods, uid)
	m.mu.Unlock()
	m.queue.Forget(uid)
}
