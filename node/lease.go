package node

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// LeaseNamespace holds one Lease per node; the node lifecycle controller
// takes a lease renewed within its duration as the node being alive, so
// the status itself need only be written when it changes.
const LeaseNamespace = "kube-node-lease"

// runLease renews the lease every quarter of its duration, with a little
// jitter so that nodes started together do not renew together.
func (h *Heartbeat) runLease(ctx context.Context) {
	interval := h.cfg.LeaseDuration / 4
	for {
		h.syncLease(ctx)
		if !sleep(ctx, interval+time.Duration(rand.Float64()*0.04*float64(interval))) {
			return
		}
	}
}

// syncLease renews the lease from the copy podline last wrote, which costs
// one write; if that fails it reads (or creates) the lease and renews that.
func (h *Heartbeat) syncLease(ctx context.Context) {
	if h.lease != nil {
		err := h.renewLease(ctx, h.lease)
		if err == nil {
			return
		}
		h.cfg.Log.Debug("cannot renew the node lease from the last copy, reading it", "node", h.cfg.Name, "err", err)
	}
	lease, created := h.ensureLease(ctx)
	h.lease = lease
	if lease != nil && !created {
		if err := h.renewLease(ctx, lease); err != nil && ctx.Err() == nil {
			h.cfg.Log.Warn("cannot renew the node lease, will retry", "node", h.cfg.Name,
				"in", h.cfg.LeaseDuration/4, "err", err)
		}
	}
}

// ensureLease reads the lease, or creates it when missing, retrying with
// backoff until it succeeds or ctx ends (then it returns nil).
func (h *Heartbeat) ensureLease(ctx context.Context) (lease *coordinationv1.Lease, created bool) {
	leases := h.cfg.Client.CoordinationV1().Leases(LeaseNamespace)
	wait := h.backoff
	for {
		lease, err := leases.Get(ctx, h.cfg.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			lease, err = leases.Create(ctx, h.newLease(nil), metav1.CreateOptions{})
			if err == nil {
				leaseRenewals.Inc()
				return lease, true
			}
		}
		if err == nil {
			return lease, false
		}
		if ctx.Err() != nil {
			return nil, false
		}
		leaseErrors.Inc()
		h.cfg.Log.Warn("cannot read or create the node lease, will retry", "node", h.cfg.Name, "in", wait, "err", err)
		if !sleep(ctx, wait) {
			return nil, false
		}
		wait = min(2*wait, maxBackoff)
	}
}

// renewLease writes base with a new renew time. The update carries base's
// resourceVersion, so a lease changed meanwhile is re-read, not clobbered.
func (h *Heartbeat) renewLease(ctx context.Context, base *coordinationv1.Lease) error {
	leases := h.cfg.Client.CoordinationV1().Leases(LeaseNamespace)
	var err error
	for range leaseRetries {
		var lease *coordinationv1.Lease
		lease, err = leases.Update(ctx, h.newLease(base), metav1.UpdateOptions{})
		if err == nil {
			h.lease = lease
			leaseRenewals.Inc()
			return nil
		}
		leaseErrors.Inc()
		if ctx.Err() != nil || apierrors.IsNotFound(err) {
			// A deleted lease is for ensureLease to make again.
			return err
		}
		if apierrors.IsConflict(err) {
			if base, _ = h.ensureLease(ctx); base == nil {
				return err
			}
		}
	}
	return fmt.Errorf("renew lease %s/%s, %d tries: %w", LeaseNamespace, h.cfg.Name, leaseRetries, err)
}

// newLease is base (or a new lease) held by this node and renewed now.
// Once the Node's UID is known the lease is owned by the Node, so deleting
// the Node deletes its lease.
func (h *Heartbeat) newLease(base *coordinationv1.Lease) *coordinationv1.Lease {
	var l *coordinationv1.Lease
	if base == nil {
		l = &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: h.cfg.Name, Namespace: LeaseNamespace}}
	} else {
		l = base.DeepCopy()
	}
	holder, seconds := h.cfg.Name, int32(h.cfg.LeaseDuration/time.Second)
	l.Spec.HolderIdentity = &holder
	l.Spec.LeaseDurationSeconds = &seconds
	l.Spec.RenewTime = &metav1.MicroTime{Time: h.cfg.Now()}
	if uid := h.NodeUID(); len(l.OwnerReferences) == 0 && uid != "" {
		l.OwnerReferences = []metav1.OwnerReference{{
			APIVersion: "v1", Kind: "Node", Name: h.cfg.Name, UID: uid,
		}}
	}
	return l
}
