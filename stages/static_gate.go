package stages

import (
	"slices"
	"sync"

	"k8s.io/apimachinery/pkg/types"
)

// staticGate holds a StaticTurn per full name of the static pods the
// pipeline knows: a map lookup per pass of a static pod, nothing for other
// pods, and no walk over pods. Callers may hold a record's lock; the gate
// never takes one, so the lock order is always record, then gate.
type staticGate struct {
	mu    sync.Mutex
	turns map[string]StaticTurn
}

func newStaticGate() *staticGate {
	return &staticGate{turns: make(map[string]StaticTurn)}
}

// update applies fn to name's turn and forgets the turn once empty.
func (g *staticGate) update(name string, fn func(StaticTurn) StaticTurn) {
	g.mu.Lock()
	t := fn(g.turns[name])
	if t.Empty() {
		delete(g.turns, name)
	} else {
		g.turns[name] = t
	}
	g.mu.Unlock()
}

// want queues uid for a turn. When uid newly queues behind another pod it
// returns that pod, for the log.
func (g *staticGate) want(name string, uid types.UID) (behind types.UID) {
	g.update(name, func(t StaticTurn) StaticTurn {
		queued := t.Running == uid || slices.Contains(t.Waiting, uid)
		t = t.Want(uid)
		switch {
		case queued || t.MayStart(uid):
		case t.Running != "":
			behind = t.Running
		default:
			behind = t.Waiting[0]
		}
		return t
	})
	return behind
}

// start reports whether uid may start now, and if so gives it the turn.
func (g *staticGate) start(name string, uid types.UID) (ok bool) {
	g.update(name, func(t StaticTurn) StaticTurn {
		t, ok = t.Start(uid)
		return t
	})
	return ok
}

// withdraw takes uid out of the queue; see StaticTurn.Withdraw.
func (g *staticGate) withdraw(name string, uid types.UID) (wake types.UID) {
	g.update(name, func(t StaticTurn) StaticTurn {
		t, wake = t.Withdraw(uid)
		return t
	})
	return wake
}

// release ends uid's turn; a pod wanted again (its manifest came back while
// it was torn down) queues anew at the end, as a new pod would.
func (g *staticGate) release(name string, uid types.UID, wantedAgain bool) (wake types.UID) {
	g.update(name, func(t StaticTurn) StaticTurn {
		t, wake = t.Release(uid)
		if wantedAgain {
			t = t.Want(uid)
			if wake == "" {
				wake = t.head()
			}
		}
		return t
	})
	return wake
}

// len returns the number of names with a turn, for tests.
func (g *staticGate) len() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.turns)
}
