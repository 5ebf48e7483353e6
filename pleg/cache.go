package pleg

import (
	"hash/maphash"
	"slices"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// Cache holds the observed runtime state of every pod, keyed by pod UID.
//
// Writers are the lifecycle sources (relist, events) and the pipeline stages,
// which record what they just did so that a pod start needs no inspection
// round trip. Observations can race (a relist may read a container as
// created just before a stage records it as running), so merges are
// monotonic per container instance: an older state never replaces a newer
// one. Readers get immutable *Pod snapshots; every write copies.
//
// The map is sharded so thousands of pods and dozens of workers do not
// queue on one lock.
type Cache struct {
	seed   maphash.Seed
	shards [cacheShards]cacheShard
}

const cacheShards = 32

type cacheShard struct {
	mu   sync.RWMutex
	pods map[types.UID]*Pod
	_    [40]byte // keep neighbouring shard locks off one cache line
}

// NewCache returns an empty cache.
func NewCache() *Cache {
	c := &Cache{seed: maphash.MakeSeed()}
	for i := range c.shards {
		c.shards[i].pods = make(map[types.UID]*Pod)
	}
	return c
}

func (c *Cache) shard(uid types.UID) *cacheShard {
	return &c.shards[maphash.String(c.seed, string(uid))%cacheShards]
}

// Get returns the pod's snapshot, or nil when the runtime holds nothing for it.
func (c *Cache) Get(uid types.UID) *Pod {
	s := c.shard(uid)
	s.mu.RLock()
	p := s.pods[uid]
	s.mu.RUnlock()
	return p
}

// UIDs returns the UIDs of every pod with something in the runtime.
func (c *Cache) UIDs() []types.UID {
	var out []types.UID
	for i := range c.shards {
		s := &c.shards[i]
		s.mu.RLock()
		for uid := range s.pods {
			out = append(out, uid)
		}
		s.mu.RUnlock()
	}
	return out
}

// Len returns the number of pods in the cache.
func (c *Cache) Len() int {
	n := 0
	for i := range c.shards {
		s := &c.shards[i]
		s.mu.RLock()
		n += len(s.pods)
		s.mu.RUnlock()
	}
	return n
}

// update applies fn to a copy of the pod and publishes the result.
// fn reports whether it changed anything worth telling the pipeline about.
func (c *Cache) update(uid types.UID, fn func(p *Pod) bool) bool {
	s := c.shard(uid)
	s.mu.Lock()
	defer s.mu.Unlock()
	old := s.pods[uid]
	p := &Pod{UID: uid}
	if old != nil {
		*p = *old
		p.Sandboxes = slices.Clone(old.Sandboxes)
		p.Containers = slices.Clone(old.Containers)
	}
	changed := fn(p)
	if p.Empty() {
		delete(s.pods, uid)
	} else {
		s.pods[uid] = p
	}
	return changed
}

// SetPodMeta records the pod's name and namespace, learnt from labels.
func (c *Cache) SetPodMeta(uid types.UID, name, namespace string) {
	s := c.shard(uid)
	s.mu.Lock()
	defer s.mu.Unlock()
	old := s.pods[uid]
	if old == nil || (old.Name == name && old.Namespace == namespace) {
		return
	}
	p := *old
	p.Name, p.Namespace = name, namespace
	s.pods[uid] = &p
}

// UpsertSandbox merges a sandbox observation. It reports whether the
// sandbox is new or changed state.
func (c *Cache) UpsertSandbox(uid types.UID, name, namespace string, sb *Sandbox) bool {
	return c.update(uid, func(p *Pod) bool {
		if name != "" {
			p.Name, p.Namespace = name, namespace
		}
		for i, old := range p.Sandboxes {
			if old.ID != sb.ID {
				continue
			}
			if old.State == SandboxNotReady && sb.State == SandboxReady {
				return false // a stale read: sandboxes never come back
			}
			merged := *sb
			if len(merged.IPs) == 0 {
				merged.IPs = old.IPs
			}
			p.Sandboxes[i] = &merged
			return old.State != sb.State
		}
		p.Sandboxes = append(p.Sandboxes, sb)
		slices.SortStableFunc(p.Sandboxes, func(a, b *Sandbox) int {
			return newestFirst(a.Attempt, b.Attempt, a.CreatedAt, b.CreatedAt)
		})
		return true
	})
}

// UpsertContainer merges a container observation. It reports whether the
// container is new or moved to another state.
func (c *Cache) UpsertContainer(uid types.UID, ctr *Container) bool {
	return c.update(uid, func(p *Pod) bool {
		for i, old := range p.Containers {
			if old.ID != ctr.ID {
				continue
			}
			if !ctr.newerThan(old) {
				return false
			}
			p.Containers[i] = ctr
			// An exit code arriving for an exit the pipeline recorded itself
			// changes the pod's status, so it counts.
			return old.State != ctr.State || (ctr.State == ContainerExited && !old.Detailed)
		}
		p.Containers = append(p.Containers, ctr)
		slices.SortStableFunc(p.Containers, func(a, b *Container) int {
			return newestFirst(a.Attempt, b.Attempt, a.CreatedAt, b.CreatedAt)
		})
		return true
	})
}

// RemoveContainer forgets a container instance.
func (c *Cache) RemoveContainer(uid types.UID, id string) bool {
	return c.update(uid, func(p *Pod) bool {
		n := len(p.Containers)
		p.Containers = slices.DeleteFunc(p.Containers, func(x *Container) bool { return x.ID == id })
		return len(p.Containers) != n
	})
}

// RemoveSandbox forgets a sandbox and every container that lived in it, as
// the runtime does on RemovePodSandbox.
func (c *Cache) RemoveSandbox(uid types.UID, id string) bool {
	return c.update(uid, func(p *Pod) bool {
		n := len(p.Sandboxes) + len(p.Containers)
		p.Sandboxes = slices.DeleteFunc(p.Sandboxes, func(x *Sandbox) bool { return x.ID == id })
		p.Containers = slices.DeleteFunc(p.Containers, func(x *Container) bool { return x.SandboxID == id })
		return len(p.Sandboxes)+len(p.Containers) != n
	})
}

// newestFirst orders instances by attempt, then by creation time, newest
// first. The attempt decides because podline numbers each new sandbox and
// each new instance of a container one past the newest: a count that no
// clock moves. The runtime's creation stamps are wall-clock times, and a
// clock set back between two instances would make the new one look older,
// so that the old dead instance would pass for the current one. The time
// still orders instances of one attempt (a container made again after a
// create that never started) and those of runtimes that number nothing.
func newestFirst(attemptA, attemptB uint32, createdA, createdB time.Time) int {
	if attemptA != attemptB {
		if attemptA > attemptB {
			return -1
		}
		return 1
	}
	return createdB.Compare(createdA)
}
