package stages

import (
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// StaticTurns returns the number of full names the pipeline keeps a
// StaticTurn for, so tests can check that none is left behind.
func (p *Pipeline) StaticTurns() int { return p.turns.len() }

// MostStarts is the most starts the gate has let in at once.
func (g *StartGate) MostStarts() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.most
}

// Parked is the number of passes waiting at the gate.
func (g *StartGate) Parked() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.parked) - g.head
}

// HoldFor makes a pod's current step back-off last d from now, as if it
// had failed many times; it reports false when the pod has no hold.
func (p *Pipeline) HoldFor(uid types.UID, d time.Duration) bool {
	rec := p.record(uid)
	if rec == nil {
		return false
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if rec.hold.until.IsZero() {
		return false
	}
	rec.hold.until = time.Now().Add(d)
	return true
}

// Held reports whether a pod backs off from a failed pass.
func (p *Pipeline) Held(uid types.UID) bool {
	rec := p.record(uid)
	if rec == nil {
		return false
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return rec.hold.wait(rec.tearingDown(), time.Now()) > 0
}

func (p *Pipeline) record(uid types.UID) *podRecord {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.records[uid]
}
