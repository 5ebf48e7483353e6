package stages

import (
	"slices"
	"sort"
	"sync"

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

type statusEntry struct {
	pod     *v1.Pod // desired pod, never modified
	status  v1.PodStatus
	version uint64
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
	s.mu.RLock()
	out := make([]v1.Pod, 0, len(s.pods))
	for _, e := range s.pods {
		p := *e.pod.DeepCopy()
		p.Status = *e.status.DeepCopy()
		out = append(out, p)
	}
	s.mu.RUnlock()
	sort.Slice(out, func(i, j int) bool {
		if out[i].Namespace != out[j].Namespace {
			return out[i].Namespace < out[j].Namespace
		}
		return out[i].Name < out[j].Name
	})
	return out
}
