package sources

import (
	"cmp"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// updatesBuffer is the capacity of the Updates channel. One Set emits at most
// one Update per Op (five), so a source can hand over a whole snapshot's diff
// without waiting for the consumer to be scheduled, while a consumer that
// falls further behind pushes back on the sources at once instead of letting
// diffs pile up in memory. Nothing is ever dropped.
const updatesBuffer = 5

// Merger keeps each source's last snapshot and turns new snapshots into
// Updates on one channel. Like kubelet, it stamps every pod it admits with
// the local annotations config.source (the source's name) and config.seen
// (when this process first saw the UID).
//
// Ownership: pods are immutable once passed to Set (the rule client-go
// informer caches already impose); a new version is a new object. Set keeps
// no slice it is given and modifies no pod. What it keeps of a pod is a
// shallow copy that shares everything but the annotations (the merger adds
// two) with the pod passed in, and it remembers the pointer passed as an
// identity hint: a pod passed again by the same pointer is unchanged. Pods
// in an emitted Update are those kept copies, shared with the merger and
// with whoever else the consumer hands them to, so no one may modify them
// either. At 10,000 pods, copying instead cost about 5 KiB a pod.
type Merger struct {
	log     *slog.Logger
	updates chan Update
	done    chan struct{}
	closing sync.Once
	allSeen atomic.Bool
	now     func() time.Time

	// mu serialises Sets, including their sends, so that the order of
	// Updates on the channel is the order in which the state changed.
	mu      sync.Mutex
	closed  bool
	sources map[string]*sourceState
	unseen  int
	names   map[podName]claim
	// uids says which source holds a UID. A UID is one pod everywhere
	// downstream (pod workers, directories, cgroups), so a second source
	// must not hand over a pod under it: a static manifest may write any
	// uid, an API pod's included.
	uids map[types.UID]string
}

type podName struct{ namespace, name string }

// claim says which pod holds a namespace/name across all sources.
type claim struct {
	source string
	uid    types.UID
}

type sourceState struct {
	entries  map[types.UID]*entry
	gen      uint64
	seen     bool
	handled  []bool               // scratch: snapshot index handled by the first pass
	rejected map[types.UID]uint64 // UID → gen last rejected; logs a reject once
}

type entry struct {
	pod  *v1.Pod // the merger's own copy
	in   *v1.Pod // pointer last passed to Set: identity means unchanged
	name podName
	gen  uint64 // last Set that held this UID
}

// NewMerger registers the sources whose snapshots Set will accept. SeenAll
// waits for every one of them.
func NewMerger(log *slog.Logger, sources ...string) *Merger {
	m := &Merger{
		log:     log,
		updates: make(chan Update, updatesBuffer),
		done:    make(chan struct{}),
		now:     time.Now,
		sources: make(map[string]*sourceState, len(sources)),
		names:   make(map[podName]claim),
		uids:    make(map[types.UID]string),
	}
	for _, s := range sources {
		if _, dup := m.sources[s]; dup {
			continue
		}
		m.sources[s] = &sourceState{entries: make(map[types.UID]*entry)}
		m.unseen++
	}
	m.allSeen.Store(m.unseen == 0)
	return m
}

// Updates is the consumer side. It is closed by Close.
func (m *Merger) Updates() <-chan Update { return m.updates }

// SeenAll reports whether every registered source has delivered at least
// one snapshot. It never blocks, so a consumer may call it while a Set waits
// on the channel.
func (m *Merger) SeenAll() bool { return m.allSeen.Load() }

// Rejecting reports whether source's last snapshot held pods the merger
// refused. One refused for a name or UID another source holds is admitted
// by a later Set once it is free, so such a source must Set again even
// when nothing of its own changed.
func (m *Merger) Rejecting(source string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	st := m.sources[source]
	return st != nil && len(st.rejected) > 0
}

// Close releases a Set blocked on a consumer that is gone, makes later Sets
// no-ops and closes the Updates channel.
func (m *Merger) Close() {
	m.closing.Do(func() {
		close(m.done)
		m.mu.Lock()
		m.closed = true
		close(m.updates)
		m.mu.Unlock()
	})
}

// Set replaces source's snapshot with pods (its whole current pod set) and
// emits the difference: at most one Update per Op, in the order REMOVE, ADD,
// UPDATE, DELETE, RECONCILE, each sorted by namespace/name. The first
// snapshot of a source always emits at least an (possibly empty) ADD so that
// a consumer waiting for SeenAll wakes up. Set blocks while the consumer
// lags. Work is O(len(pods)); an unchanged snapshot emits nothing.
func (m *Merger) Set(source string, pods []*v1.Pod) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return
	}
	st := m.sources[source]
	if st == nil {
		panic("BUG: sources: Set from unregistered source " + source)
	}
	st.gen++
	var d diffResult
	m.updateKnown(source, st, pods, &d)
	m.sweep(st, &d)
	m.addNew(source, st, pods, &d)
	clear(st.handled)
	st.pruneRejects()

	first := !st.seen
	if first {
		st.seen = true
		m.unseen--
		if m.unseen == 0 {
			m.allSeen.Store(true)
		}
	}
	m.emit(source, &d, first)
}

type diffResult struct {
	removes, adds, updates, deletes, reconciles []*v1.Pod
}

// updateKnown handles snapshot pods whose UID the source already had.
func (m *Merger) updateKnown(source string, st *sourceState, pods []*v1.Pod, d *diffResult) {
	if cap(st.handled) < len(pods) {
		st.handled = make([]bool, len(pods))
	}
	st.handled = st.handled[:len(pods)]
	for i, p := range pods {
		if p == nil {
			st.handled[i] = true
			continue
		}
		e := st.entries[p.UID]
		if e == nil {
			continue
		}
		if e.name != (podName{p.Namespace, p.Name}) {
			// A new identity under an old UID: leave the entry unmarked so
			// sweep removes the old name and addNew adds the new one.
			continue
		}
		st.handled[i] = true
		if e.gen == st.gen {
			m.reject(source, st, p, "duplicate UID in one snapshot")
			continue
		}
		e.gen = st.gen
		if e.in == p {
			continue
		}
		if errs := validatePathNames(p); len(errs) > 0 {
			// The pod keeps the version it has, as a static pod keeps its
			// last good manifest.
			m.reject(source, st, p, invalidError(errs).Error())
			continue
		}
		e.in = p
		switch classify(e.pod, p) {
		case changedSpec:
			e.pod = m.replace(e.pod, p)
			d.updates = append(d.updates, e.pod)
		case changedDeletion:
			e.pod = m.replace(e.pod, p)
			d.deletes = append(d.deletes, e.pod)
		case changedStatus:
			e.pod = m.replace(e.pod, p)
			d.reconciles = append(d.reconciles, e.pod)
		}
	}
}

// sweep drops the entries the snapshot no longer holds. The merger lets go
// of them, so they are emitted without another copy.
func (m *Merger) sweep(st *sourceState, d *diffResult) {
	for uid, e := range st.entries {
		if e.gen == st.gen {
			continue
		}
		delete(st.entries, uid)
		delete(m.uids, uid) // only this source could hold it
		if c, ok := m.names[e.name]; ok && c.uid == uid {
			delete(m.names, e.name)
		}
		d.removes = append(d.removes, e.pod)
	}
}

// addNew admits snapshot pods with UIDs the source did not have. A
// namespace/name held by another UID, in any source, stays with its holder,
// and so does a UID another source holds.
// A pod whose UID or names could not each be one path element is refused,
// whatever its source.
func (m *Merger) addNew(source string, st *sourceState, pods []*v1.Pod, d *diffResult) {
	for i, p := range pods {
		if st.handled[i] {
			continue
		}
		if p.UID == "" {
			m.reject(source, st, p, "pod has no UID")
			continue
		}
		if errs := validatePathNames(p); len(errs) > 0 {
			m.reject(source, st, p, invalidError(errs).Error())
			continue
		}
		if _, dup := st.entries[p.UID]; dup {
			m.reject(source, st, p, "duplicate UID in one snapshot")
			continue
		}
		if holder, taken := m.uids[p.UID]; taken {
			m.reject(source, st, p, "UID already used by a pod from source "+holder)
			continue
		}
		name := podName{p.Namespace, p.Name}
		if holder, taken := m.names[name]; taken {
			m.reject(source, st, p, "namespace/name already used by pod "+string(holder.uid)+" from source "+holder.source)
			continue
		}
		seen := p.Annotations[ConfigSeenAnnotation]
		if seen == "" {
			seen = m.now().UTC().Format(time.RFC3339Nano)
		}
		own := withLocal(p, seen, source)
		m.names[name] = claim{source: source, uid: p.UID}
		m.uids[p.UID] = source
		st.entries[p.UID] = &entry{pod: own, in: p, name: name, gen: st.gen}
		d.adds = append(d.adds, own)
	}
}

// replace makes the kept copy of next, with the local annotations of old:
// when it was first seen and where it came from.
func (m *Merger) replace(old, next *v1.Pod) *v1.Pod {
	return withLocal(next, old.Annotations[ConfigSeenAnnotation], old.Annotations[ConfigSourceAnnotation])
}

// withLocal is a shallow copy of p with the local annotations set. Only
// the annotations are p's own; spec, status and the rest of the metadata
// are p's, unchanged and shared.
func withLocal(p *v1.Pod, seen, source string) *v1.Pod {
	own := *p
	own.Annotations = make(map[string]string, len(p.Annotations)+2)
	maps.Copy(own.Annotations, p.Annotations)
	own.Annotations[ConfigSeenAnnotation] = seen
	own.Annotations[ConfigSourceAnnotation] = source
	return &own
}

// reject logs a pod the merger will not admit, once per UID while the
// source keeps sending it: a rescan every few seconds must not flood the log.
func (m *Merger) reject(source string, st *sourceState, p *v1.Pod, why string) {
	if st.rejected == nil {
		st.rejected = make(map[types.UID]uint64)
	}
	_, logged := st.rejected[p.UID]
	st.rejected[p.UID] = st.gen
	if logged {
		return
	}
	rejectedPods.Inc()
	m.log.Error("rejecting pod", "source", source, "pod", p.Namespace+"/"+p.Name, "uid", p.UID, "reason", why)
}

// pruneRejects forgets rejects that did not recur in the current Set, so a
// pod rejected again later is logged again.
func (st *sourceState) pruneRejects() {
	for uid, g := range st.rejected {
		if g != st.gen {
			delete(st.rejected, uid)
		}
	}
}

func (m *Merger) emit(source string, d *diffResult, first bool) {
	ok := m.send(source, REMOVE, d.removes, false) &&
		m.send(source, ADD, d.adds, first) &&
		m.send(source, UPDATE, d.updates, false) &&
		m.send(source, DELETE, d.deletes, false)
	if ok {
		m.send(source, RECONCILE, d.reconciles, false)
	}
}

// send emits pods as one Update, or nothing when there are none and evenEmpty
// is false. It reports false once the merger is closed.
func (m *Merger) send(source string, op Op, pods []*v1.Pod, evenEmpty bool) bool {
	if len(pods) == 0 && !evenEmpty {
		return true
	}
	slices.SortFunc(pods, comparePods)
	select {
	case m.updates <- Update{Op: op, Source: source, Pods: pods}:
		return true
	case <-m.done:
		return false
	}
}

func comparePods(a, b *v1.Pod) int {
	return cmp.Or(
		cmp.Compare(a.Namespace, b.Namespace),
		cmp.Compare(a.Name, b.Name),
		cmp.Compare(a.UID, b.UID),
	)
}
