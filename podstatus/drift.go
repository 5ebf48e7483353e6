package podstatus

import (
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// drifted reports whether someone else changed a field this node owns in
// the API object of a pod whose status was sent, and marks the pod for a
// patch if so. The node lifecycle controller does this: when it loses a
// node's heartbeats it sets every pod there Ready=False, and only the node
// agent sets it back, as the kubelet's status manager does when the pod
// manager's copy differs from what it last sent. Nothing on the node
// changes, so without this check the API keeps the wrong Ready until the
// pod's status changes for another reason.
//
// It reads the watch's copy and compares only when that copy is at
// another resourceVersion than the one last known here: a node whose pods
// nobody else writes costs a string comparison per pod and resync. A copy
// that merely lags behind this manager's own last patch looks like a
// drift too; its patch then carries the copy's resourceVersion, fails as
// a conflict and is computed again against a fresh read.
func (m *Manager) drifted(uid types.UID, pod *v1.Pod, ours v1.PodStatus, t target, seenRV string) bool {
	if m.cfg.Watched == nil {
		return false
	}
	w, ok := m.cfg.Watched(t.namespace, t.name)
	if !ok || w.UID != t.uid || w.ResourceVersion == "" || w.ResourceVersion == seenRV {
		return false
	}
	driftChecks.Inc()
	next := mergeStatus(pod, &w.Status, ours, time.Now())
	patch, err := statusPatch(t.uid, "", &w.Status, &next.status)
	drift := err == nil && patch != nil
	m.mu.Lock()
	if st := m.pods[uid]; st != nil && st.target == t.uid && st.seenRV == seenRV {
		if drift {
			st.drift = true
		} else {
			st.seenRV = w.ResourceVersion
		}
	}
	m.mu.Unlock()
	if drift {
		driftsFound.Inc()
		m.log.Debug("pod status changed in the API server by someone else", "pod", t, "uid", t.uid)
	}
	return drift
}
