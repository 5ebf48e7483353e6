package sources

import (
	"sync"
	"sync/atomic"

	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/cache"
)

// IsMirrorPod reports whether pod is a mirror pod: the API server's copy of
// a static pod, which the node shows but never runs.
func IsMirrorPod(pod *v1.Pod) bool {
	_, ok := pod.Annotations[ConfigMirrorAnnotation]
	return ok
}

// podStore is the reflector's store for the API source: the node's pods by
// namespace/name, plus what changed since the last snapshot. Every mutation
// kicks the delivery loop, which takes snapshots at its own pace, so a burst
// of watch events costs one snapshot rather than one each.
//
// Pods are immutable once stored: an unchanged pod keeps its pointer, which
// is what lets the Merger skip comparing it.
type podStore struct {
	nodeName string
	kick     chan struct{} // size 1: one pending wake-up is enough
	synced   atomic.Bool   // the first full list has arrived

	mu           sync.Mutex
	pods         map[podName]*v1.Pod
	podsDirty    bool // a non-mirror pod changed since the last snapshot
	mirrorsDirty bool // a mirror pod changed since the last snapshot
}

var (
	_ cache.ReflectorStore    = (*podStore)(nil)
	_ cache.TransformingStore = (*podStore)(nil)
)

func newPodStore(nodeName string) *podStore {
	return &podStore{
		nodeName: nodeName,
		kick:     make(chan struct{}, 1),
		pods:     make(map[podName]*v1.Pod),
	}
}

// Transformer trims what podline never reads before a pod is kept: managed
// fields are often the largest part of a pod object, and thousands of pods
// stay in memory for the life of the process.
func (s *podStore) Transformer() cache.TransformFunc { return trimPod }

func trimPod(obj any) (any, error) {
	if p, ok := obj.(*v1.Pod); ok && p.ManagedFields != nil {
		p.ManagedFields = nil
	}
	return obj, nil
}

func (s *podStore) Add(obj any) error    { s.put(obj); return nil }
func (s *podStore) Update(obj any) error { s.put(obj); return nil }
func (s *podStore) Resync() error        { return nil }

func (s *podStore) Delete(obj any) error {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	p, ok := obj.(*v1.Pod)
	if !ok {
		return nil
	}
	apiEvents.Inc()
	s.mu.Lock()
	name := podName{p.Namespace, p.Name}
	if old := s.pods[name]; old != nil {
		delete(s.pods, name)
		s.markDirty(old)
	}
	s.mu.Unlock()
	s.wake()
	return nil
}

// put stores a pod from a watch event. A pod bound elsewhere is dropped: the
// field selector should have kept it away, and running another node's pod
// would be far worse than ignoring a confused server.
func (s *podStore) put(obj any) {
	p, ok := obj.(*v1.Pod)
	if !ok {
		return
	}
	apiEvents.Inc()
	trimPod(p)
	s.mu.Lock()
	name := podName{p.Namespace, p.Name}
	old := s.pods[name]
	switch {
	case p.Spec.NodeName != s.nodeName:
		if old == nil {
			s.mu.Unlock()
			return
		}
		delete(s.pods, name)
		s.markDirty(old)
	case old != nil && sameVersion(old, p):
		s.mu.Unlock()
		return
	default:
		s.pods[name] = p
		if old != nil {
			s.markDirty(old)
		}
		s.markDirty(p)
	}
	s.mu.Unlock()
	s.wake()
}

// Replace installs a full list (the first one, and every relist after the
// watch was lost). Pods whose resourceVersion did not move keep their old
// pointer, so a relist of 10,000 unchanged pods costs the Merger pointer
// comparisons only.
func (s *podStore) Replace(list []any, _ string) error {
	next := make(map[podName]*v1.Pod, len(list))
	s.mu.Lock()
	for _, obj := range list {
		p, ok := obj.(*v1.Pod)
		if !ok || p.Spec.NodeName != s.nodeName {
			continue
		}
		trimPod(p)
		name := podName{p.Namespace, p.Name}
		if old := s.pods[name]; old != nil && sameVersion(old, p) {
			p = old
		}
		next[name] = p
	}
	s.pods = next
	s.podsDirty, s.mirrorsDirty = true, true
	s.mu.Unlock()
	s.synced.Store(true)
	s.wake()
	return nil
}

// get returns the stored pod of that name.
func (s *podStore) get(name podName) (*v1.Pod, bool) {
	s.mu.Lock()
	p, ok := s.pods[name]
	s.mu.Unlock()
	return p, ok
}

// sameVersion: the API server gives every write a new resourceVersion, so an
// equal one (with the same UID) is the same object.
func sameVersion(a, b *v1.Pod) bool {
	return a.UID == b.UID && a.ResourceVersion != "" && a.ResourceVersion == b.ResourceVersion
}

// markDirty needs s.mu.
func (s *podStore) markDirty(p *v1.Pod) {
	if IsMirrorPod(p) {
		s.mirrorsDirty = true
	} else {
		s.podsDirty = true
	}
}

func (s *podStore) wake() {
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

// snapshot returns what changed since the last call: the pods to run
// (appended to buf, which is reused) if any changed, and a new slice of the
// mirror pods if any changed. Each flag clears as its set is returned.
func (s *podStore) snapshot(buf []*v1.Pod) (pods []*v1.Pod, podsChanged bool, mirrors []*v1.Pod, mirrorsChanged bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	podsChanged, mirrorsChanged = s.podsDirty, s.mirrorsDirty
	if !podsChanged && !mirrorsChanged {
		return buf[:0], false, nil, false
	}
	pods = buf[:0]
	if mirrorsChanged {
		mirrors = []*v1.Pod{}
	}
	for _, p := range s.pods {
		switch {
		case IsMirrorPod(p):
			if mirrorsChanged {
				mirrors = append(mirrors, p)
			}
		case podsChanged:
			pods = append(pods, p)
		}
	}
	s.podsDirty, s.mirrorsDirty = false, false
	return pods, podsChanged, mirrors, mirrorsChanged
}
