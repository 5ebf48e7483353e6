package volumes

import (
	"crypto/sha256"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podline/podline/kubeapi"
)

// podContent is what the source keeps of one pod whose content volumes it
// set up, from the first setup to Release.
type podContent struct {
	// objects are the configMaps and secrets its volumes show; the pod is
	// one of their users in kubeapi.Objects.
	objects map[kubeapi.ObjectRef]struct{}
	// downward is, per volume name, a digest of the downward API values
	// the volume was last written with.
	downward map[string][sha256.Size]byte
	// changes counts what made the volumes stale (an object changed, a
	// token fell due); written is the count the last full write began
	// at. They differ while a change waits to be written.
	changes, written uint64
	// tokens is the life of each token in its volumes, on the
	// monotonic clock (token_clock.go), by the token's digest.
	tokens map[[sha256.Size]byte]tokenLife
}

// minTokenDelay keeps a token that is due already, or a clock that jumped,
// from firing its timer in a loop.
const minTokenDelay = time.Second

// podLocked returns uid's record, making it. Called with mu.
func (s *Source) podLocked(uid types.UID) *podContent {
	p := s.pods[uid]
	if p == nil {
		p = &podContent{objects: map[kubeapi.ObjectRef]struct{}{}, downward: map[string][sha256.Size]byte{},
			tokens: map[[sha256.Size]byte]tokenLife{}}
		s.pods[uid] = p
		trackedPods.Inc()
	}
	return p
}

// use makes pod uid a user of ref: the object is watched while the pod is.
func (s *Source) use(uid types.UID, ref kubeapi.ObjectRef) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.podLocked(uid)
	if _, ok := p.objects[ref]; ok {
		return
	}
	p.objects[ref] = struct{}{}
	users := s.users[ref]
	if users == nil {
		users = map[types.UID]struct{}{}
		s.users[ref] = users
	}
	users[uid] = struct{}{}
	s.objects.Acquire(ref)
}

// objectChanged marks every pod that shows ref stale and asks for a pass
// of each: only those pods, and only when the object's data changed.
func (s *Source) objectChanged(ref kubeapi.ObjectRef) {
	s.mu.Lock()
	uids := make([]types.UID, 0, len(s.users[ref]))
	for uid := range s.users[ref] {
		s.pods[uid].changes++
		uids = append(uids, uid)
	}
	s.mu.Unlock()
	refreshTriggers[triggerObject].Add(len(uids))
	for _, uid := range uids {
		s.notify(uid)
	}
}

// tokenDueIn sets pod uid's token timer: the earliest due token wins.
func (s *Source) tokenDueIn(uid types.UID, d time.Duration) {
	s.timers.After(uid, max(d, minTokenDelay))
}

// tokenDue is the token timer firing.
func (s *Source) tokenDue(uid types.UID) {
	s.mu.Lock()
	p := s.pods[uid]
	if p != nil {
		p.changes++
	}
	s.mu.Unlock()
	if p != nil {
		refreshTriggers[triggerToken].Inc()
		s.notify(uid)
	}
}

// wrote records the downward API values vol was written with.
func (s *Source) wrote(pod *v1.Pod, vol *v1.Volume, digest [sha256.Size]byte, hasDownward bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.podLocked(pod.UID)
	if hasDownward {
		p.downward[vol.Name] = digest
	}
}

// Stale reports whether pod's content volumes must be written again: an
// object they show changed, a token in them is due, or a label, an
// annotation or a resource they show has changed in pod. mark goes to
// Refreshed once every content volume has been set up again; a change
// that arrives meanwhile keeps the pod stale.
func (s *Source) Stale(pod *v1.Pod) (mark uint64, stale bool) {
	digests := downwardDigests(pod, s.allocatable)
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.pods[pod.UID]
	if p == nil {
		return 0, false
	}
	if p.changes != p.written {
		return p.changes, true
	}
	for name, d := range digests {
		if p.downward[name] != d {
			refreshTriggers[triggerMetadata].Inc()
			return p.changes, true
		}
	}
	return p.changes, false
}

// Refreshed records that pod uid's content volumes were all written with
// what was current at mark.
func (s *Source) Refreshed(uid types.UID, mark uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p := s.pods[uid]; p != nil && mark > p.written {
		p.written = mark
	}
}

// Release forgets pod uid: its volumes are being torn down. Its objects
// lose a user (the last one closes the watch) and its token timer stops.
func (s *Source) Release(uid types.UID) {
	s.mu.Lock()
	p := s.pods[uid]
	if p != nil {
		delete(s.pods, uid)
		trackedPods.Dec()
		for ref := range p.objects {
			users := s.users[ref]
			delete(users, uid)
			if len(users) == 0 {
				delete(s.users, ref)
			}
			s.objects.Release(ref)
		}
	}
	s.mu.Unlock()
	s.timers.Cancel(uid)
}
