package auth

import (
	"testing"
	"time"
)

func TestTTLCacheExpiry(t *testing.T) {
	c := newTTLCache[string, int](10)
	now := time.Unix(1000, 0)
	c.add("a", 1, time.Minute, now)
	if v, ok := c.get("a", now.Add(59*time.Second)); !ok || v != 1 {
		t.Fatalf("live entry: %v %v", v, ok)
	}
	if _, ok := c.get("a", now.Add(time.Minute)); ok {
		t.Fatal("entry outlived its TTL")
	}
	if c.len() != 0 {
		t.Fatal("expired entry was not dropped on lookup")
	}
	c.add("b", 2, 0, now)
	if c.len() != 0 {
		t.Fatal("a zero TTL stored an entry")
	}
}

func TestTTLCacheFullDropsExpiredFirst(t *testing.T) {
	c := newTTLCache[int, int](3)
	now := time.Unix(1000, 0)
	c.add(1, 1, time.Hour, now)   // long-lived, least recently used
	c.add(2, 2, time.Second, now) // expires
	c.add(3, 3, time.Second, now) // expires
	later := now.Add(2 * time.Second)
	c.add(4, 4, time.Hour, later)
	if c.len() != 2 {
		t.Fatalf("len = %d, want 2: the two expired entries swept", c.len())
	}
	if _, ok := c.get(1, later); !ok {
		t.Fatal("a live entry was evicted while expired ones were there to drop")
	}
}

func TestTTLCacheEvictsLeastRecentlyUsed(t *testing.T) {
	c := newTTLCache[int, int](2)
	now := time.Unix(1000, 0)
	c.add(1, 1, time.Hour, now)
	c.add(2, 2, time.Hour, now)
	c.get(1, now) // 2 is now the least recently used
	c.add(3, 3, time.Hour, now)
	if _, ok := c.get(2, now); ok {
		t.Fatal("least recently used entry kept")
	}
	for _, k := range []int{1, 3} {
		if _, ok := c.get(k, now); !ok {
			t.Fatalf("entry %d evicted", k)
		}
	}
}
