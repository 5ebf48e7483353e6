package mirror

import (
	"context"
	"log/slog"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/podline/podline/sources"
)

const (
	// DefaultPeriod is how often the manager looks again without being
	// told of a change, which is how failed requests are retried.
	DefaultPeriod = 10 * time.Second
	// nodeWait is the retry while the Node has no UID yet: registration
	// takes a moment at start, and static pods should show up soon after.
	nodeWait = time.Second
	// learnedTTL bounds how long what the manager learned from its own
	// requests overrides the watch. The watch normally confirms within
	// milliseconds; if it never does (the pod came and went between two
	// snapshots), the watch is believed again after this.
	learnedTTL = 30 * time.Second
	// requestTimeout bounds one API request.
	requestTimeout = 10 * time.Second
)

// Config is what the manager needs.
type Config struct {
	Client   kubernetes.Interface
	NodeName string
	// NodeUID returns the UID of this node's Node object, or "" until it
	// is registered. Mirror pods are owned by the Node (the NodeRestriction
	// admission plugin insists), so none is created before.
	NodeUID func() types.UID
	Log     *slog.Logger
	// Period: 0 means DefaultPeriod.
	Period time.Duration
}

// Manager keeps the mirror pods of the node's static pods. All methods are
// safe for concurrent use; Run does the API requests, from one goroutine.
type Manager struct {
	client   kubernetes.Interface
	nodeName string
	nodeUID  func() types.UID
	log      *slog.Logger
	period   time.Duration
	kick     chan struct{} // size 1: one pending look is enough
	now      func() time.Time

	mu       sync.Mutex
	statics  map[types.UID]*v1.Pod // own copies, by static pod UID
	observed map[podName]*v1.Pod   // mirror pods in the last watch snapshot (shared, read-only)
	seen     bool                  // a watch snapshot has arrived
	ready    bool                  // every source has delivered: orphans may go
	// learned holds mirrors the manager created (or found by name) and the
	// watch has not shown yet; gone holds mirrors it deleted that the
	// watch still shows. Both are newer than the watch.
	learned map[podName]learnedRef
	gone    map[types.UID]time.Time
	// logged is the last error logged per pod, so a failure repeating
	// every period is logged once.
	logged     map[podName]string
	loggedWait bool
}

type learnedRef struct {
	ref mirrorRef
	at  time.Time
}

// New makes a manager; Run starts it.
func New(c Config) *Manager {
	if c.Period <= 0 {
		c.Period = DefaultPeriod
	}
	if c.NodeUID == nil {
		panic("BUG: mirror: Config.NodeUID is nil")
	}
	return &Manager{
		client: c.Client, nodeName: c.NodeName, nodeUID: c.NodeUID, period: c.Period,
		log:      c.Log.With("component", "mirror"),
		kick:     make(chan struct{}, 1),
		now:      time.Now,
		statics:  make(map[types.UID]*v1.Pod),
		observed: make(map[podName]*v1.Pod),
		learned:  make(map[podName]learnedRef),
		gone:     make(map[types.UID]time.Time),
		logged:   make(map[podName]string),
	}
}

// Apply takes an update from the merger. Updates of the API source are
// ignored; those of the static sources add, change or remove static pods.
// Apply copies what it keeps, so the update's pods stay the caller's.
func (m *Manager) Apply(u sources.Update) {
	if u.Source == sources.APISource || u.Op == sources.RECONCILE {
		return
	}
	m.mu.Lock()
	for _, p := range u.Pods {
		if u.Op == sources.REMOVE {
			delete(m.statics, p.UID)
		} else {
			m.statics[p.UID] = p.DeepCopy()
		}
	}
	m.mu.Unlock()
	m.wake()
}

// SourcesReady says every source has delivered its first snapshot and Apply
// has seen it, so a mirror pod without a static pod is an orphan. Until
// then orphans stay: the static pod may simply not have been read yet.
func (m *Manager) SourcesReady() {
	m.mu.Lock()
	m.ready = true
	m.mu.Unlock()
	m.wake()
}

// SetMirrors takes the mirror pods bound to this node, as the API source's
// Mirrors callback delivers them: the whole set, shared with the watch
// cache. The manager keeps the pods but never modifies them.
func (m *Manager) SetMirrors(pods []*v1.Pod) {
	m.mu.Lock()
	m.observed = make(map[podName]*v1.Pod, len(pods))
	uids := make(map[types.UID]struct{}, len(pods))
	for _, p := range pods {
		m.observed[nameOf(p)] = p
		uids[p.UID] = struct{}{}
	}
	for name, l := range m.learned {
		if p := m.observed[name]; p != nil && p.UID == l.ref.uid {
			delete(m.learned, name) // the watch caught up
		}
	}
	for uid := range m.gone {
		if _, still := uids[uid]; !still {
			delete(m.gone, uid)
		}
	}
	m.seen = true
	m.mu.Unlock()
	m.wake()
}

// MirrorOf returns the mirror pod of a static pod: the pod its status goes
// to. ok is false while there is none that carries the static pod's hash.
func (m *Manager) MirrorOf(static *v1.Pod) (namespace, name string, uid types.UID, ok bool) {
	n := nameOf(static)
	m.mu.Lock()
	ref, found := m.lookupLocked(n, m.now())
	m.mu.Unlock()
	if !found || !ref.serves(hashOf(static)) {
		return "", "", "", false
	}
	return n.namespace, n.name, ref.uid, true
}

// lookupLocked is the newest knowledge of the mirror under name.
func (m *Manager) lookupLocked(name podName, now time.Time) (mirrorRef, bool) {
	if l, ok := m.learned[name]; ok && now.Sub(l.at) < learnedTTL {
		return l.ref, true
	}
	if p := m.observed[name]; p != nil {
		if _, deleted := m.gone[p.UID]; !deleted {
			return refOf(p), true
		}
	}
	return mirrorRef{}, false
}

func (m *Manager) wake() {
	select {
	case m.kick <- struct{}{}:
	default:
	}
}

// Run reconciles on every change and every period until ctx is done.
// Nothing happens before the first watch snapshot: without it every
// mirror would look missing.
func (m *Manager) Run(ctx context.Context) {
	t := time.NewTimer(m.period)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-m.kick:
		case <-t.C:
		}
		t.Reset(m.reconcile(ctx))
	}
}
