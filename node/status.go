package node

import (
	"context"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/resourceversion"
)

// runStatus registers the node, then checks its status every
// UpdateFrequency and whenever kicked.
func (h *Heartbeat) runStatus(ctx context.Context) {
	if h.cfg.Register && !h.register(ctx) {
		return
	}
	tick := time.NewTicker(h.cfg.UpdateFrequency)
	defer tick.Stop()
	for {
		err := h.syncStatus(ctx)
		switch {
		case err == nil || ctx.Err() != nil:
		case apierrors.IsNotFound(err) && h.cfg.Register:
			// Someone deleted the Node: make it again rather than leave
			// the node out of the cluster until podline restarts.
			h.registered.Store(false)
			h.cfg.Log.Warn("the node is gone from the API server, registering it again", "node", h.cfg.Name)
			if !h.register(ctx) {
				return
			}
			continue
		default:
			h.cfg.Log.Warn("cannot update the node status, will retry", "node", h.cfg.Name,
				"in", h.cfg.UpdateFrequency, "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		case <-h.kick:
		}
	}
}

// syncStatus computes the status once and writes it if it changed or the
// report period is up, trying up to statusRetries times.
func (h *Heartbeat) syncStatus(ctx context.Context) error {
	hl := h.health()
	var err error
	for try := range statusRetries {
		if err = h.tryUpdateStatus(ctx, try, hl); err == nil || ctx.Err() != nil {
			return err
		}
		h.cfg.Log.Debug("node status update failed", "node", h.cfg.Name, "try", try+1, "err", err)
	}
	return fmt.Errorf("%d tries: %w", statusRetries, err)
}

// tryUpdateStatus compares the status podline would write with the Node
// the API server has, so a change made by someone else (the node lifecycle
// controller setting Ready to Unknown while podline could not reach it) is
// corrected at the next check. The first try reads the API server's cache
// (resourceVersion 0: no etcd read every ten seconds per node); retries
// read etcd.
func (h *Heartbeat) tryUpdateStatus(ctx context.Context, try int, hl Health) error {
	opts := metav1.GetOptions{}
	if try == 0 {
		opts.ResourceVersion = "0"
	}
	got, err := h.cfg.Client.CoreV1().Nodes().Get(ctx, h.cfg.Name, opts)
	if err != nil {
		statusErrors.Inc()
		return fmt.Errorf("get node %s: %w", h.cfg.Name, err)
	}
	old := h.newest(got)
	h.registered.Store(true)
	now := h.cfg.Now()
	cur := old.DeepCopy()
	relabeled := ensureRuntimeLabels(cur)
	events := setStatus(cur, &h.cfg, now, hl)
	reportDue := now.Sub(h.lastReport) >= h.cfg.ReportFrequency+h.reportDelay
	// An API server that dropped the declared features is offered them
	// again with each periodic write, which costs nothing extra: it may
	// have been upgraded or had NodeDeclaredFeatures turned on since.
	setDeclaredFeatures(&cur.Status, h.declaredDropped && !reportDue)
	changed := relabeled || statusChanged(&old.Status, &cur.Status)
	if !changed && !reportDue {
		statusUnchanged.Inc()
		return nil
	}
	// Spread the periodic writes of nodes that changed (or started) at
	// the same moment over the report period, as the kubelet does; a write
	// made because the period was up keeps the rhythm it has.
	if changed || h.lastReport.IsZero() {
		h.reportDelay = time.Duration(float64(h.cfg.ReportFrequency) * (h.jitter() - 0.5))
	} else {
		h.reportDelay = 0
	}
	written, err := h.patchStatus(ctx, old, cur)
	if err != nil {
		statusErrors.Inc()
		return err
	}
	wasDropped := h.declaredDropped
	h.declaredDropped = dropsDeclaredFeatures(&cur.Status, &written.Status) || (wasDropped && len(cur.Status.DeclaredFeatures) == 0)
	if h.declaredDropped && !wasDropped {
		h.cfg.Log.Info("the API server does not keep the node's declared features (NodeDeclaredFeatures is off or unknown there): "+
			"it will translate WebSocket exec, attach and port-forward to SPDY itself", "node", h.cfg.Name)
	}
	h.lastReport = now
	h.record(events)
	setReadyGauge(findCondition(&cur.Status, v1.NodeReady))
	statusWrites.Inc()
	return nil
}

// newest is got, or the Node podline last wrote if the cache answered
// with an older one: a status compared against a stale Node could look
// unchanged when what podline last wrote differs.
func (h *Heartbeat) newest(got *v1.Node) *v1.Node {
	mine := h.node.Load()
	if mine == nil || mine.UID != got.UID {
		h.node.Store(got)
		return got
	}
	if c, err := resourceversion.CompareResourceVersion(got.ResourceVersion, mine.ResourceVersion); err == nil && c < 0 {
		return mine
	}
	h.node.Store(got)
	return got
}
