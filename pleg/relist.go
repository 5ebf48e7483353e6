package pleg

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/VictoriaMetrics/metrics"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podline/podline/cri"
)

// Runtime is the part of the CRI a relist reads.
type Runtime interface {
	ListPodSandbox(ctx context.Context, filter *runtimeapi.PodSandboxFilter) ([]*runtimeapi.PodSandbox, error)
	ListContainers(ctx context.Context, filter *runtimeapi.ContainerFilter) ([]*runtimeapi.Container, error)
	PodSandboxStatus(ctx context.Context, id string) (*runtimeapi.PodSandboxStatus, error)
	ContainerStatus(ctx context.Context, id string) (*runtimeapi.ContainerStatus, error)
}

var (
	relistDuration = metrics.NewHistogram(`podline_pleg_relist_duration_seconds`)
	relistErrors   = metrics.NewCounter(`podline_pleg_relist_errors_total`)
	relistEvents   = metrics.NewCounter(`podline_pleg_relist_pod_events_total`)
	discrepancies  = metrics.NewCounter(`podline_pleg_relist_discrepancies_total`)
)

// inspectParallelism bounds the status calls one relist issues at once: a
// restart over thousands of containers must not take one round trip each
// in series, nor open thousands of streams at once.
const inspectParallelism = 16

type seen struct {
	uid   types.UID
	state uint8
}

// Relister is the generic lifecycle source: it lists every sandbox and
// container, compares with its previous listing, inspects what changed,
// merges the result into the cache and tells the pipeline which pods moved.
// Its cost grows with the number of containers on every period, which is why
// it is the fallback and not the design.
type Relister struct {
	rt     Runtime
	cache  *Cache
	period time.Duration
	notify func(types.UID)
	log    *slog.Logger

	// mu serialises relists: the periodic one and a resync after an event
	// stream broke may ask at once.
	mu sync.Mutex
	// Previous listing, guarded by mu.
	sandboxes  map[string]seen
	containers map[string]seen

	// lastOK is when the last relist succeeded, with its monotonic
	// reading: a Unix time here made health follow the wall clock, and a
	// clock set back an hour hid a dead runtime for an hour. nil: none yet.
	lastOK atomic.Pointer[time.Time]

	// auditGrace > 0 makes the relist a safety net: what it finds that the
	// cache does not know, and still does not know auditGrace later, is a
	// discrepancy: a state no event delivered.
	auditGrace time.Duration
	// held counts suspects waiting out the grace (tests wait for zero).
	held atomic.Int64
}

// Audit makes periodic relists count and log discrepancies: changes the
// cache still lacks grace after a listing found them. The grace runs from
// the listing, not from the change: a runtime that falls behind under load
// makes an exit visible, and sends its event, seconds after it happened.
func (r *Relister) Audit(grace time.Duration) { r.auditGrace = grace }

// unhealthyAfter is how long relists may fail before podline reports
// itself unhealthy: the runtime is unreachable, so pod state goes stale.
const unhealthyAfter = 3 * time.Minute

// Healthy reports an error when no relist has succeeded for a while.
func (r *Relister) Healthy() error {
	last := r.lastOK.Load()
	if last == nil {
		return errors.New("no successful relist yet")
	}
	if since := time.Since(*last); since > max(unhealthyAfter, 3*r.period) {
		return fmt.Errorf("last successful relist %s ago", since.Round(time.Second))
	}
	return nil
}

// NewRelister returns a relist source. notify is called once per pod whose
// observed state changed; it may block (that is the pipeline's backpressure).
func NewRelister(rt Runtime, cache *Cache, period time.Duration, notify func(types.UID), log *slog.Logger) *Relister {
	return &Relister{
		rt: rt, cache: cache, period: period, notify: notify, log: log,
		sandboxes:  make(map[string]seen),
		containers: make(map[string]seen),
	}
}

// Run relists until ctx ends, a period after the last successful relist
// whoever ran it: a resync (after the event stream reconnected, or every
// minute in its stead while the runtime has none) has just listed
// everything, and a safety relist right behind it would find nothing and
// cost as much (at 10,000 pods a sixth of the idle agent's CPU without a
// stream).
func (r *Relister) Run(ctx context.Context) {
	t := time.NewTimer(r.period)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if wait := untilNextRelist(r.lastOK.Load(), time.Now(), r.period); wait > 0 {
			t.Reset(wait)
			continue
		}
		if err := r.Relist(ctx); err != nil && ctx.Err() == nil {
			r.log.Warn("relist failed", "err", err)
		}
		t.Reset(r.period)
	}
}

// untilNextRelist is how long the periodic relist still waits at now: a
// period after the last successful relist (none: not at all).
func untilNextRelist(last *time.Time, now time.Time, period time.Duration) time.Duration {
	if last == nil {
		return 0
	}
	return period - now.Sub(*last)
}

// Relist runs one full listing and notifies the pods that changed.
func (r *Relister) Relist(ctx context.Context) error {
	return r.run(ctx, r.auditGrace > 0)
}

// Resync is a relist whose findings are expected, not discrepancies: it
// closes the gap after an event stream broke.
func (r *Relister) Resync(ctx context.Context) error {
	return r.run(ctx, false)
}

func (r *Relister) run(ctx context.Context, audit bool) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	start := time.Now()
	defer relistDuration.UpdateDuration(start)
	// The first listing loads what ran before this process: there was
	// nothing to deliver an event about it, so nothing in it is missed.
	audit = audit && r.lastOK.Load() != nil
	changed, err := r.relist(ctx, audit)
	if err != nil {
		relistErrors.Inc()
		return err
	}
	ok := time.Now()
	r.lastOK.Store(&ok)
	relistEvents.Add(len(changed))
	for uid := range changed {
		r.notify(uid)
	}
	return nil
}

func (r *Relister) relist(ctx context.Context, audit bool) (map[types.UID]struct{}, error) {
	// What the cache held before the listing: anything in it the listing
	// lacks is gone, whoever put it there. (Taken first, so that what is
	// added during the listing is not mistaken for gone.)
	before := r.cachedIDs()
	sbs, err := r.rt.ListPodSandbox(ctx, nil)
	if err != nil {
		return nil, err
	}
	ctrs, err := r.rt.ListContainers(ctx, nil)
	if err != nil {
		return nil, err
	}
	changed := make(map[types.UID]struct{})
	var mu sync.Mutex
	mark := func(uid types.UID) {
		mu.Lock()
		changed[uid] = struct{}{}
		mu.Unlock()
	}
	// In an audit, what the cache lacks waits out the grace before it is
	// applied and counted: an event the runtime sent as the listing ran
	// is still on its way.
	var found []suspect
	hold := func(s suspect) {
		mu.Lock()
		found = append(found, s)
		mu.Unlock()
	}

	nowSandboxes := make(map[string]seen, len(sbs))
	var inspect []func()
	for _, sb := range sbs {
		uid, name, ns, ok := PodIdentity(sb.GetLabels())
		if !ok {
			continue
		}
		s := seen{uid: uid, state: uint8(sandboxState(sb.GetState()))}
		nowSandboxes[sb.GetId()] = s
		if prev, ok := r.sandboxes[sb.GetId()]; ok && prev == s {
			continue
		}
		// Already in the cache in this state (an event or the pipeline
		// put it there): nothing to inspect. Without this, the first
		// relist after pods start inspects every one of them.
		if known := r.cache.Get(uid).Sandbox(sb.GetId()); known != nil && known.State == sandboxState(sb.GetState()) {
			continue
		}
		sb := sb
		inspect = append(inspect, func() {
			obs := SandboxFromList(sb)
			if st, err := r.rt.PodSandboxStatus(ctx, sb.GetId()); err == nil {
				obs = SandboxFromStatus(st)
			} else if !cri.IsNotFound(err) {
				r.log.Debug("inspect sandbox", "id", sb.GetId(), "err", err)
			}
			if audit {
				if prev := r.cache.Get(uid).Sandbox(obs.ID); prev == nil || prev.State != obs.State {
					hold(suspect{uid: uid, name: name, ns: ns, id: obs.ID, sandbox: true})
					return
				}
			}
			if r.cache.UpsertSandbox(uid, name, ns, obs) {
				mark(uid)
			}
		})
	}

	nowContainers := make(map[string]seen, len(ctrs))
	for _, c := range ctrs {
		uid, _, _, ok := PodIdentity(c.GetLabels())
		if !ok {
			continue
		}
		s := seen{uid: uid, state: uint8(containerState(c.GetState()))}
		nowContainers[c.GetId()] = s
		if prev, ok := r.containers[c.GetId()]; ok && prev == s {
			continue
		}
		if known := r.cache.Get(uid).Container(c.GetId()); known != nil && known.Detailed && known.State == containerState(c.GetState()) {
			continue
		}
		c := c
		inspect = append(inspect, func() {
			obs := ContainerFromList(c)
			if st, err := r.rt.ContainerStatus(ctx, c.GetId()); err == nil {
				obs = ContainerFromStatus(st, c.GetPodSandboxId())
			} else if cri.IsNotFound(err) {
				return // removed since the listing; the next one drops it
			} else {
				r.log.Debug("inspect container", "id", c.GetId(), "err", err)
			}
			if audit {
				if prev := r.cache.Get(uid).Container(obs.ID); prev == nil || prev.State != obs.State {
					hold(suspect{uid: uid, id: obs.ID, sandboxID: c.GetPodSandboxId()})
					return
				}
			}
			if r.cache.UpsertContainer(uid, obs) {
				mark(uid)
			}
		})
	}
	runBounded(inspect, inspectParallelism)

	for id, uid := range before.containers {
		if _, ok := nowContainers[id]; ok {
			continue
		}
		if audit {
			found = append(found, suspect{uid: uid, id: id, removed: true})
		} else if r.cache.RemoveContainer(uid, id) {
			changed[uid] = struct{}{}
		}
	}
	for id, uid := range before.sandboxes {
		if _, ok := nowSandboxes[id]; ok {
			continue
		}
		if audit {
			found = append(found, suspect{uid: uid, id: id, sandbox: true, removed: true})
		} else if r.cache.RemoveSandbox(uid, id) {
			changed[uid] = struct{}{}
		}
	}
	r.sandboxes, r.containers = nowSandboxes, nowContainers
	r.hold(found)
	return changed, nil
}

type cachedIDs struct {
	sandboxes, containers map[string]types.UID
}

func (r *Relister) cachedIDs() cachedIDs {
	ids := cachedIDs{sandboxes: map[string]types.UID{}, containers: map[string]types.UID{}}
	for _, uid := range r.cache.UIDs() {
		p := r.cache.Get(uid)
		if p == nil {
			continue
		}
		for _, sb := range p.Sandboxes {
			ids.sandboxes[sb.ID] = uid
		}
		for _, c := range p.Containers {
			ids.containers[c.ID] = uid
		}
	}
	return ids
}

// runBounded runs fns with at most n in parallel and waits for all.
func runBounded(fns []func(), n int) {
	if len(fns) <= 1 {
		for _, fn := range fns {
			fn()
		}
		return
	}
	sem := make(chan struct{}, n)
	var wg sync.WaitGroup
	for _, fn := range fns {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			fn()
		}()
	}
	wg.Wait()
}

// discrepancy records a state the relist found that no event delivered.
func (r *Relister) discrepancy(uid types.UID, name, ns, what string) {
	discrepancies.Inc()
	if name == "" {
		if p := r.cache.Get(uid); p != nil {
			name, ns = p.Name, p.Namespace
		}
	}
	r.log.Warn("relist found a change no event delivered", "pod", ns+"/"+name, "uid", uid, "change", what)
}

// Discrepancies returns how many discrepancies relists found so far.
func Discrepancies() uint64 { return discrepancies.Get() }

func shortID(id string) string { return id[:min(len(id), 12)] }
