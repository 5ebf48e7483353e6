package volumes

import (
	"context"
	"sync"
	"time"

	"github.com/podline/podline/kubeapi"
)

// objectTTL is how long one read of a configMap or secret that no volume
// watches serves the environment of other containers. Containers that start
// together read the same objects: at 1,000 of them one read each would be
// 1,000 requests under the node's API rate limit. A few seconds coalesce
// such a burst into a handful of reads, and a container never starts with
// content older than that.
const objectTTL = 5 * time.Second

// maxCachedObjects bounds the cache; beyond it expired entries are dropped.
const maxCachedObjects = 4096

type objectKey = kubeapi.ObjectRef

// cachedObject is one read: while done is open it is in flight, and
// readers of the same object wait for it instead of reading again.
type cachedObject struct {
	done  chan struct{}
	at    time.Time
	data  map[string][]byte // shared by every reader: read only
	found bool
	err   error
	// readers counts the gets that shared this read: tests see from it
	// that a reader joined a read in flight. Guarded by objectCache.mu.
	readers int
}

// objectCache coalesces reads of the same object within objectTTL. Only
// answers are kept (found or not found); an error is never reused.
type objectCache struct {
	mu      sync.Mutex
	objects map[objectKey]*cachedObject
	now     func() time.Time
}

func newObjectCache(now func() time.Time) *objectCache {
	return &objectCache{objects: make(map[objectKey]*cachedObject), now: now}
}

// objectReadTimeout bounds one shared read. The read runs for everyone
// waiting on it, so it must not run under the context of whichever reader
// came first: that reader's pass being cancelled (its pod deleted) would
// fail the read for all the others. Each reader still stops waiting on its
// own context; this only ends a read that nobody's context would.
const objectReadTimeout = 30 * time.Second

// get returns the cached answer for key, or reads it with fetch. The read
// is shared by every reader of key meanwhile and runs apart from them
// (see objectReadTimeout); a reader whose ctx ends stops waiting with
// ctx's error, and the read goes on for the others.
func (c *objectCache) get(ctx context.Context, key objectKey, fetch func(context.Context) (map[string][]byte, bool, error)) (map[string][]byte, bool, error) {
	c.mu.Lock()
	o := c.objects[key]
	if o != nil && !c.fresh(o) {
		o = nil
	}
	if o == nil {
		o = &cachedObject{done: make(chan struct{})}
		c.prune()
		c.objects[key] = o
		// Without the reader's cancellation, with its values.
		go c.read(context.WithoutCancel(ctx), key, o, fetch)
	}
	o.readers++
	c.mu.Unlock()
	select {
	case <-o.done:
		return o.data, o.found, o.err
	case <-ctx.Done():
		return nil, false, ctx.Err()
	}
}

// read fills o with one fetch of key and wakes its readers.
func (c *objectCache) read(ctx context.Context, key objectKey, o *cachedObject, fetch func(context.Context) (map[string][]byte, bool, error)) {
	ctx, cancel := context.WithTimeout(ctx, objectReadTimeout)
	defer cancel()
	data, found, err := fetch(ctx)
	c.mu.Lock()
	o.data, o.found, o.err = data, found, err
	o.at = c.now()
	if err != nil && c.objects[key] == o {
		delete(c.objects, key)
	}
	c.mu.Unlock()
	close(o.done)
}

// fresh: in flight, or answered less than objectTTL ago. Called with mu.
func (c *objectCache) fresh(o *cachedObject) bool {
	select {
	case <-o.done:
		return c.now().Sub(o.at) < objectTTL
	default:
		return true
	}
}

// prune drops expired entries once the cache is full. Called with mu.
func (c *objectCache) prune() {
	if len(c.objects) < maxCachedObjects {
		return
	}
	for k, o := range c.objects {
		if !c.fresh(o) {
			delete(c.objects, k)
		}
	}
}
