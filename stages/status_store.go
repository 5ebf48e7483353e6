package stages

import (
	"iter"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/types"
)

// StatusStore holds the latest status of every pod with a version that
// grows with each change, so a consumer that sends statuses elsewhere can
// tell a stale one from a newer one. Readers get copies they may keep.
type StatusStore struct {
	mu   sync.RWMutex
	pods map[types.UID]*statusEntry
	// byName indexes pods by namespace/name, in the order they arrived:
	// two can share a name while one replaces the other.
	byName map[string][]types.UID
	seq    uint64
	// onChange is told of every changed or deleted UID, outside the lock.
	onChange func(types.UID)
}

// statusEntry is immutable once stored: a change stores a new one. That
// lets readers share it outside the lock, and its JSON be kept with it.
type statusEntry struct {
	pod     *v1.Pod // desired pod, never modified
	status  v1.PodStatus
	version uint64
	json    atomic.Pointer[[]byte] // the pod with this status, encoded at the first /pods that wants it
}

// NewStatusStore returns an empty store.
func NewStatusStore() *StatusStore {
	return &StatusStore{pods: make(map[types.UID]*statusEntry), byName: make(map[string][]types.UID)}
}

// OnChange registers fn to be told of every UID whose status changed or
// was deleted. Call it before the store is used; fn must not block (it runs
// on the status stage's workers).
func (s *StatusStore) OnChange(fn func(types.UID)) { s.onChange = fn }

// Set records a pod's status and reports whether it changed. pod is kept,
// not copied: callers must not modify it afterwards.
func (s *StatusStore) Set(pod *v1.Pod, st v1.PodStatus) bool {
	s.mu.Lock()
	e := s.pods[pod.UID]
	if e != nil && e.pod == pod && equality.Semantic.DeepEqual(e.status, st) {
		s.mu.Unlock()
		return false
	}
	s.seq++
	if e == nil {
		k := pod.Namespace + "/" + pod.Name
		s.byName[k] = append(s.byName[k], pod.UID)
	}
	s.pods[pod.UID] = &statusEntry{pod: pod, status: st, version: s.seq}
	s.mu.Unlock()
	if s.onChange != nil {
		s.onChange(pod.UID)
	}
	return true
}

// Refresh replaces the desired pod kept with a pod's last status by a
// newer one (a graceful deletion, a label edit) as soon as a source
// delivers it, so that /pods shows it while the pass it starts runs, as the
// kubelet's does. The status stays until the pass computes a new one. A
// pod without a status is left to its first pass.
func (s *StatusStore) Refresh(pod *v1.Pod) {
	s.mu.Lock()
	e := s.pods[pod.UID]
	if e == nil || e.pod == pod {
		s.mu.Unlock()
		return
	}
	s.seq++
	s.pods[pod.UID] = &statusEntry{pod: pod, status: e.status, version: s.seq}
	s.mu.Unlock()
	if s.onChange != nil {
		s.onChange(pod.UID)
	}
}

// Get returns a pod's desired spec (shared: do not modify it), a copy of
// its last status, and the status's version.
func (s *StatusStore) Get(uid types.UID) (*v1.Pod, v1.PodStatus, uint64, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	e, ok := s.pods[uid]
	if !ok {
		return nil, v1.PodStatus{}, 0, false
	}
	return e.pod, *e.status.DeepCopy(), e.version, true
}

// Status returns a pod's last status and its version.
func (s *StatusStore) Status(uid types.UID) (v1.PodStatus, uint64, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	e, ok := s.pods[uid]
	if !ok {
		return v1.PodStatus{}, 0, false
	}
	return *e.status.DeepCopy(), e.version, true
}

// current returns the stored status itself, not a copy: for the status
// stage, which only reads it, on every pass. Stored statuses are never
// modified in place.
func (s *StatusStore) current(uid types.UID) *v1.PodStatus {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if e, ok := s.pods[uid]; ok {
		return &e.status
	}
	return nil
}

// Delete forgets a pod.
func (s *StatusStore) Delete(uid types.UID) {
	s.mu.Lock()
	e, had := s.pods[uid]
	if had {
		delete(s.pods, uid)
		k := e.pod.Namespace + "/" + e.pod.Name
		if uids := slices.DeleteFunc(s.byName[k], func(u types.UID) bool { return u == uid }); len(uids) == 0 {
			delete(s.byName, k)
		} else {
			s.byName[k] = uids
		}
	}
	s.mu.Unlock()
	if had && s.onChange != nil {
		s.onChange(uid)
	}
}

// Find returns the pod of a namespace and name (the newest when two share
// it) and a copy of its status; uid, when set, must match.
func (s *StatusStore) Find(namespace, name string, uid types.UID) (*v1.Pod, v1.PodStatus, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	uids := s.byName[namespace+"/"+name]
	for i := len(uids) - 1; i >= 0; i-- {
		if uid == "" || uids[i] == uid {
			e := s.pods[uids[i]]
			return e.pod, *e.status.DeepCopy(), true
		}
	}
	return nil, v1.PodStatus{}, false
}

// Len returns the number of pods with a status.
func (s *StatusStore) Len() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.pods)
}

// Pods returns every pod with its status, ordered by namespace and name.
func (s *StatusStore) Pods() []v1.Pod {
	entries := s.sorted()
	out := make([]v1.Pod, len(entries))
	for i, e := range entries {
		out[i] = *e.pod.DeepCopy()
		out[i].Status = *e.status.DeepCopy()
	}
	return out
}

// All yields every pod and its status, ordered by namespace and name,
// without copying either: both are shared and must not be modified. For
// readers of every pod, such as a stats scrape, that would otherwise copy
// ten thousand pods to read a few fields of each.
func (s *StatusStore) All() iter.Seq2[*v1.Pod, *v1.PodStatus] {
	return func(yield func(*v1.Pod, *v1.PodStatus) bool) {
		for _, e := range s.sorted() {
			if !yield(e.pod, &e.status) {
				return
			}
		}
	}
}

// sorted returns the stored entries ordered by namespace and name. The
// lock is held only to list them: entries never change once stored.
func (s *StatusStore) sorted() []*statusEntry {
	s.mu.RLock()
	out := make([]*statusEntry, 0, len(s.pods))
	for _, e := range s.pods {
		out = append(out, e)
	}
	s.mu.RUnlock()
	slices.SortFunc(out, func(a, b *statusEntry) int {
		if c := strings.Compare(a.pod.Namespace, b.pod.Namespace); c != 0 {
			return c
		}
		if c := strings.Compare(a.pod.Name, b.pod.Name); c != 0 {
			return c
		}
		return strings.Compare(string(a.pod.UID), string(b.pod.UID))
	})
	return out
}
