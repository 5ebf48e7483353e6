package auth

import (
	"container/list"
	"sync"
	"time"
)

// sweepEvery bounds how often a full cache looks for expired entries, so a
// flood of distinct keys costs a scan per second, not per insert.
const sweepEvery = time.Second

// ttlCache is a bounded map whose entries expire. When full it drops the
// expired entries, then the least recently used ones: an attacker sending
// distinct tokens can churn it but never grow it.
type ttlCache[K comparable, V any] struct {
	mu        sync.Mutex
	max       int
	order     *list.List // of *cacheEntry; front is the most recently used
	items     map[K]*list.Element
	lastSweep time.Time
}

type cacheEntry[K comparable, V any] struct {
	key     K
	val     V
	expires time.Time
}

func newTTLCache[K comparable, V any](max int) *ttlCache[K, V] {
	if max < 1 {
		max = 1
	}
	return &ttlCache[K, V]{max: max, order: list.New(), items: make(map[K]*list.Element)}
}

// get returns the live value under key; an expired one is dropped.
func (c *ttlCache[K, V]) get(key K, now time.Time) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var zero V
	el, ok := c.items[key]
	if !ok {
		return zero, false
	}
	e := el.Value.(*cacheEntry[K, V])
	if !now.Before(e.expires) {
		c.remove(el)
		return zero, false
	}
	c.order.MoveToFront(el)
	return e.val, true
}

// add stores val under key until now+ttl; a ttl of zero or less stores
// nothing, which is how a TTL flag of 0 turns caching off.
func (c *ttlCache[K, V]) add(key K, val V, ttl time.Duration, now time.Time) {
	if ttl <= 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.items[key]; ok {
		e := el.Value.(*cacheEntry[K, V])
		e.val, e.expires = val, now.Add(ttl)
		c.order.MoveToFront(el)
		return
	}
	if len(c.items) >= c.max && now.Sub(c.lastSweep) >= sweepEvery {
		c.lastSweep = now
		for el := c.order.Back(); el != nil; {
			prev := el.Prev()
			if !now.Before(el.Value.(*cacheEntry[K, V]).expires) {
				c.remove(el)
			}
			el = prev
		}
	}
	for len(c.items) >= c.max {
		c.remove(c.order.Back())
	}
	c.items[key] = c.order.PushFront(&cacheEntry[K, V]{key: key, val: val, expires: now.Add(ttl)})
}

func (c *ttlCache[K, V]) remove(el *list.Element) {
	c.order.Remove(el)
	delete(c.items, el.Value.(*cacheEntry[K, V]).key)
}

func (c *ttlCache[K, V]) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.items)
}
