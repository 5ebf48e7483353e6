package pleg

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/podline/podline/cri"
)

// suspect is a change an audit listing found that the cache lacked: a
// container or sandbox in a state the cache does not hold, or one the
// cache holds that the runtime no longer has.
type suspect struct {
	uid      types.UID
	name, ns string
	id       string
	// sandboxID is a container's sandbox, as the listing named it.
	sandboxID string
	sandbox   bool
	removed   bool
}

// settleTimeout bounds the inspections of one settlement.
const settleTimeout = 30 * time.Second

// hold settles suspects once the audit grace has passed.
func (r *Relister) hold(suspects []suspect) {
	if len(suspects) == 0 {
		return
	}
	r.held.Add(1)
	time.AfterFunc(r.auditGrace, func() {
		defer r.held.Add(-1)
		ctx, cancel := context.WithTimeout(context.Background(), settleTimeout)
		defer cancel()
		r.settle(ctx, suspects)
	})
}

// Settling reports whether audit findings are still waiting out the grace.
func (r *Relister) Settling() bool { return r.held.Load() > 0 }

// settle asks the runtime again about each suspect. What the cache still
// lacks now no event delivered in time: it is applied, counted and logged,
// and its pod told. What an event brought meanwhile is left alone.
func (r *Relister) settle(ctx context.Context, suspects []suspect) {
	r.mu.Lock()
	defer r.mu.Unlock()
	changed := make(map[types.UID]struct{})
	for _, s := range suspects {
		if r.settleOne(ctx, s) {
			changed[s.uid] = struct{}{}
		}
	}
	for uid := range changed {
		r.notify(uid)
	}
}

func (r *Relister) settleOne(ctx context.Context, s suspect) bool {
	p := r.cache.Get(s.uid)
	if s.sandbox {
		st, err := r.rt.PodSandboxStatus(ctx, s.id)
		switch {
		case cri.IsNotFound(err):
			if p.Sandbox(s.id) != nil && r.cache.RemoveSandbox(s.uid, s.id) {
				r.discrepancy(s.uid, s.name, s.ns, fmt.Sprintf("sandbox %s removed", shortID(s.id)))
				return true
			}
		case err != nil:
			delete(r.sandboxes, s.id) // the next listing looks again
		case !s.removed:
			obs := SandboxFromStatus(st)
			if prev := p.Sandbox(s.id); (prev == nil || prev.State != obs.State) && r.cache.UpsertSandbox(s.uid, s.name, s.ns, obs) {
				r.discrepancy(s.uid, s.name, s.ns, fmt.Sprintf("sandbox %s %s", shortID(obs.ID), obs.State))
				return true
			}
		}
		return false
	}
	st, err := r.rt.ContainerStatus(ctx, s.id)
	switch {
	case cri.IsNotFound(err):
		if p.Container(s.id) != nil && r.cache.RemoveContainer(s.uid, s.id) {
			r.discrepancy(s.uid, "", "", fmt.Sprintf("container %s removed", shortID(s.id)))
			return true
		}
	case err != nil:
		delete(r.containers, s.id)
	case !s.removed:
		prev := p.Container(s.id)
		obs := ContainerFromStatus(st, s.sandboxID)
		if (prev == nil || prev.State != obs.State) && r.cache.UpsertContainer(s.uid, obs) {
			r.discrepancy(s.uid, "", "", fmt.Sprintf("container %s (%s) %s", obs.Name, shortID(obs.ID), obs.State))
			return true
		}
	}
	return false
}
