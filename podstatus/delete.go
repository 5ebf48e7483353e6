package podstatus

import (
	"context"
	"errors"
	"fmt"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// finish deletes a gracefully deleted API pod once it is torn down on the
// node (Terminated) and the status it had then has landed: clients that
// watch the pod see its final container states before it disappears. A
// mirror pod is never deleted here; the mirror pod manager owns it. It
// reports whether to try again after a back-off.
func (m *Manager) finish(ctx context.Context, uid types.UID, pod *v1.Pod, t target) (retry bool) {
	if t.mirror || pod.DeletionTimestamp == nil {
		return false
	}
	m.mu.Lock()
	st := m.pods[uid]
	due := st != nil && st.target == t.uid && st.final > 0 && st.sent >= st.final && !st.deleted && !st.gone
	m.mu.Unlock()
	if !due {
		return false
	}
	err := m.deleteAPIPod(ctx, t)
	switch {
	case err == nil:
		deletesOK.Inc()
		m.log.Info("pod deleted from the API server", "pod", t, "uid", t.uid)
	case errors.Is(err, errGone):
		deletesGone.Inc()
		m.log.Debug("pod already gone from the API server", "pod", t, "uid", t.uid)
	default:
		deletesError.Inc()
		m.quiet.failed(m.log, "pod delete failed; retrying", "pod", t, "err", err)
		return true
	}
	m.mu.Lock()
	st.deleted = true
	m.mu.Unlock()
	return false
}

// deleteAPIPod deletes the target at once (grace 0: its grace period was
// spent on the node) and only if it is still the same object.
func (m *Manager) deleteAPIPod(ctx context.Context, t target) error {
	rctx, cancel := context.WithTimeout(ctx, m.cfg.RequestTimeout)
	defer cancel()
	grace := int64(0)
	uid := t.uid
	err := m.cfg.Client.CoreV1().Pods(t.namespace).Delete(rctx, t.name, metav1.DeleteOptions{
		GracePeriodSeconds: &grace,
		Preconditions:      &metav1.Preconditions{UID: &uid},
	})
	switch {
	case err == nil:
		return nil
	case apierrors.IsNotFound(err), apierrors.IsConflict(err):
		// A failed UID precondition is a conflict: the name now belongs
		// to another pod, and ours is gone.
		return fmt.Errorf("delete pod %s: %w", t, errGone)
	}
	return fmt.Errorf("delete pod %s: %w", t, err)
}
