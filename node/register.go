package node

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// register creates the Node, or adopts and reconciles the one that exists,
// retrying with a backoff that doubles up to maxBackoff. It returns false
// only when ctx ends first.
func (h *Heartbeat) register(ctx context.Context) bool {
	wait := h.backoff
	for {
		err := h.tryRegister(ctx)
		if err == nil {
			h.registered.Store(true)
			return true
		}
		if ctx.Err() != nil {
			return false
		}
		registerErrors.Inc()
		h.cfg.Log.Warn("cannot register the node, will retry", "node", h.cfg.Name, "in", wait, "err", err)
		if !sleep(ctx, wait) {
			return false
		}
		wait = min(2*wait, maxBackoff)
	}
}

// tryRegister makes one attempt. A Node that already exists (podline
// restarted, or the node was re-registered) gets its owned labels
// reconciled; a create that is forbidden may still find the Node there,
// as when an administrator pre-created it and denied create.
func (h *Heartbeat) tryRegister(ctx context.Context) error {
	nodes := h.cfg.Client.CoreV1().Nodes()
	now := h.cfg.Now()
	initial, events := initialNode(&h.cfg, now, h.health())
	created, err := nodes.Create(ctx, initial, metav1.CreateOptions{})
	if err == nil {
		// The create carried the status: it counts as a report.
		h.lastReport = now
		h.node.Store(created)
		h.record(events)
		setReadyGauge(findCondition(&created.Status, v1.NodeReady))
		registerCreated.Inc()
		h.cfg.Log.Info("registered the node", "node", h.cfg.Name, "uid", created.UID)
		return nil
	}
	if !apierrors.IsAlreadyExists(err) && !apierrors.IsForbidden(err) {
		return fmt.Errorf("create node %s: %w", h.cfg.Name, err)
	}
	createErr := err
	existing, err := nodes.Get(ctx, h.cfg.Name, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("create node %s: %w; get it: %w", h.cfg.Name, createErr, err)
	}
	h.node.Store(existing)
	desired := existing.DeepCopy()
	if reconcileExisting(desired, initial) {
		if _, err := h.patchStatus(ctx, existing, desired); err != nil {
			return fmt.Errorf("reconcile existing node %s: %w", h.cfg.Name, err)
		}
	}
	registerExisting.Inc()
	h.cfg.Log.Info("node was already registered", "node", h.cfg.Name, "uid", existing.UID)
	return nil
}

// patchStatus writes cur over old through nodes/<name>/status and keeps the
// result as the newest Node seen.
func (h *Heartbeat) patchStatus(ctx context.Context, old, cur *v1.Node) (*v1.Node, error) {
	patch, err := statusPatch(old, cur)
	if err != nil {
		return nil, err
	}
	updated, err := h.cfg.Client.CoreV1().Nodes().Patch(ctx, h.cfg.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}, "status")
	if err != nil {
		return nil, fmt.Errorf("patch status of node %s: %w", h.cfg.Name, err)
	}
	h.node.Store(updated)
	return updated, nil
}
