package pleg

import (
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// tombstoneTTL is how long a deleted id is remembered: far longer than an
// event sent before the deletion can take to arrive, so such an event never
// brings the object back into the cache.
const tombstoneTTL = time.Minute

// pruneEvery bounds how many events pass between two prunes of the object
// table (or its size, if larger, which keeps the cost per event constant).
const pruneEvery = 1024

// objectTable is what the event source remembers per sandbox and container
// of podline's pods: the owning pod (a sandbox's DELETED event carries no
// labels) and the time of the newest event applied for the object. It is
// owned by the Run goroutine.
type objectTable struct {
	byID map[string]*object
	// graves lists deleted ids in deletion order, so the expired ones are
	// always at the front.
	graves     []grave
	sincePrune int
}

type object struct {
	uid       types.UID
	sandboxID string // a container's sandbox
	sandbox   bool
	last      time.Time // event time of the newest snapshot applied
	deleted   bool
}

type grave struct {
	id      string
	expires time.Time
}

func newObjectTable() objectTable {
	return objectTable{byID: make(map[string]*object)}
}

// maxReorder is how much older than the newest applied snapshot of an
// object a snapshot may be and still count as stale. The runtime sends
// its events out of order by milliseconds; a snapshot older by more than
// this was stamped after the runtime's clock was set back, and is news.
const maxReorder = 30 * time.Second

// admits reports whether a snapshot taken at may be applied to the object:
// it is not deleted and the snapshot is not older than the newest applied,
// unless it is so much older that the runtime's clock must have been set
// back (the cache's own merge rules still keep a state from going back).
// A snapshot without a time is not ordered and passes.
func (t *objectTable) admits(id string, at time.Time) bool {
	o := t.byID[id]
	if o == nil {
		return true
	}
	if o.deleted {
		return false
	}
	return at.IsZero() || !at.Before(o.last) || o.last.Sub(at) > maxReorder
}

// applied records that a snapshot taken at was applied. sandboxID is ""
// for a sandbox.
func (t *objectTable) applied(id string, uid types.UID, sandboxID string, at time.Time) {
	o := t.byID[id]
	if o == nil {
		o = &object{uid: uid, sandboxID: sandboxID, sandbox: sandboxID == ""}
		t.byID[id] = o
	}
	if at.After(o.last) {
		o.last = at
	}
}

// gone reports whether id was deleted (and not yet forgotten).
func (t *objectTable) gone(id string) bool {
	o := t.byID[id]
	return o != nil && o.deleted
}

// bury marks an object deleted until tombstoneTTL after now.
func (t *objectTable) bury(id string, uid types.UID, sandbox bool, now time.Time) {
	o := t.byID[id]
	if o == nil {
		o = &object{uid: uid, sandbox: sandbox}
		t.byID[id] = o
	}
	if o.deleted {
		return
	}
	o.deleted = true
	t.graves = append(t.graves, grave{id: id, expires: now.Add(tombstoneTTL)})
}

// expire forgets the deletions older than tombstoneTTL.
func (t *objectTable) expire(now time.Time) {
	n := 0
	for n < len(t.graves) && !t.graves[n].expires.After(now) {
		if o := t.byID[t.graves[n].id]; o != nil && o.deleted {
			delete(t.byID, t.graves[n].id)
		}
		t.graves[n] = grave{} // let the id go
		n++
	}
	// Re-slicing from the front is enough: the next append that outgrows
	// the array copies only the live graves.
	t.graves = t.graves[n:]
}

// maybePrune prunes once enough events passed since the last prune.
func (t *objectTable) maybePrune(cache *Cache, now time.Time) {
	t.sincePrune++
	if t.sincePrune >= max(pruneEvery, len(t.byID)) {
		t.prune(cache, now)
	}
}

// prune buries the objects the cache no longer holds: a relist found them
// gone while their DELETED event was lost (or is still on its way).
func (t *objectTable) prune(cache *Cache, now time.Time) {
	t.sincePrune = 0
	for id, o := range t.byID {
		if o.deleted {
			continue
		}
		p := cache.Get(o.uid)
		if (o.sandbox && p.Sandbox(id) == nil) || (!o.sandbox && p.Container(id) == nil) {
			t.bury(id, o.uid, o.sandbox, now)
		}
	}
}
