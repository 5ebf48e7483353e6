package podstatus

import (
	"context"
	"errors"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	utilnet "k8s.io/apimachinery/pkg/util/net"

	"github.com/podline/podline/sources"
)

// errGone: the API object a status was meant for no longer exists, or a
// different object (another UID) took its name.
var errGone = errors.New("pod gone from the API server")

// errRejected: the API server refused the status itself as invalid;
// sending it again cannot help.
var errRejected = errors.New("status rejected by the API server")

// target is the API object a pod's status goes to: the pod itself, or a
// static pod's mirror pod.
type target struct {
	namespace, name string
	uid             types.UID
	mirror          bool
}

func (t target) String() string { return t.namespace + "/" + t.name }

// targetOf names where pod's status goes; ok is false for a static pod
// that has no mirror pod yet. Like the kubelet, a pod without a source
// annotation counts as an API pod.
func (m *Manager) targetOf(pod *v1.Pod) (target, bool) {
	src, annotated := pod.Annotations[sources.ConfigSourceAnnotation]
	if !annotated || src == sources.APISource {
		return target{namespace: pod.Namespace, name: pod.Name, uid: pod.UID}, true
	}
	if m.cfg.MirrorOf == nil {
		return target{}, false
	}
	ns, name, uid, ok := m.cfg.MirrorOf(pod)
	if !ok || uid == "" {
		return target{}, false
	}
	return target{namespace: ns, name: name, uid: uid, mirror: true}, true
}

// sync sends uid's latest status unless the API object has it, then
// deletes the object if the pod's teardown is complete. It reports
// whether to try again after a back-off. The queue hands a UID to one
// worker at a time, so only Notify, Terminated and resync race with it,
// and they touch only changedAt and final.
func (m *Manager) sync(ctx context.Context, uid types.UID) (retry bool) {
	pod, status, version, ok := m.cfg.Store.Get(uid)
	if !ok {
		m.forget(uid)
		return false
	}
	t, ok := m.targetOf(pod)
	if !ok {
		// No mirror pod yet: its creation (Notify) or the resync brings
		// this pod back.
		return false
	}
	m.mu.Lock()
	st := m.stateLocked(uid)
	if st.target != t.uid {
		*st = podState{target: t.uid, changedAt: st.changedAt, final: st.final}
	}
	if st.gone || st.deleted {
		m.mu.Unlock()
		return false
	}
	if version <= st.sent && !st.gated && !st.drift {
		st.changedAt = time.Time{}
		m.mu.Unlock()
		patchesStale.Inc()
		return m.finish(ctx, uid, pod, t)
	}
	api := st.api
	if st.gated {
		api = nil // re-read the gate conditions
	}
	// A drift was seen in the watch's copy, which is then newer than
	// anything this manager wrote.
	useWatch := !st.written || st.drift
	if st.drift {
		api = nil
	}
	changedAt := st.changedAt
	st.changedAt = time.Time{}
	m.mu.Unlock()

	res, err := m.send(ctx, pod, t, status, api, useWatch)

	m.mu.Lock()
	switch {
	case err == nil:
		st.sent, st.api, st.gated, st.drift = version, res.api, res.gated, false
		st.written = st.written || res.patched
		if res.rv != "" {
			st.seenRV = res.rv
		}
	case errors.Is(err, errGone):
		st.gone, st.api = true, nil
	case errors.Is(err, errRejected):
		st.sent, st.api = version, nil
	default:
		if !notApplied(err) {
			// Read it afresh, not from the watch: the patch may have landed.
			st.api, st.written = nil, true
		}
		if !changedAt.IsZero() {
			st.changedAt = changedAt
		}
	}
	m.mu.Unlock()

	switch {
	case err == nil && res.patched:
		patchesOK.Inc()
		if !changedAt.IsZero() {
			syncSeconds.UpdateDuration(changedAt)
		}
		if m.quiet.succeeded(m.log) {
			// The API server answers again: every pod that failed
			// goes now, not when its back-off (up to RetryMax) ends.
			go m.resync()
		}
	case err == nil:
		patchesSkipped.Inc()
	case errors.Is(err, errGone):
		patchesGone.Inc()
		m.log.Debug("pod status not sent: no such pod in the API server", "pod", t, "uid", t.uid, "mirror", t.mirror)
		return false
	case errors.Is(err, errRejected):
		patchesError.Inc()
		m.log.Warn("pod status rejected by the API server", "pod", t, "uid", t.uid, "err", err)
	default:
		patchesError.Inc()
		m.quiet.failed(m.log, "pod status update failed; retrying", "pod", t, "err", err)
		return true
	}
	return m.finish(ctx, uid, pod, t)
}

// sent is the outcome of a send that did not fail.
type sent struct {
	api     *v1.PodStatus // the API object's status now
	rv      string        // and its resourceVersion, if known
	patched bool          // false: it already had this status
	gated   bool
}

// send brings the API object's status to ours. api is the object's
// status as last known, nil to read it first. With useWatch, an unknown
// status is taken from the watch's copy of the object when it has one,
// and the patch carries that copy's resourceVersion as a precondition; if
// the object has moved on since (a conflict), it is read and the patch
// computed again against what the API server has.
func (m *Manager) send(ctx context.Context, pod *v1.Pod, t target, ours v1.PodStatus, api *v1.PodStatus, useWatch bool) (sent, error) {
	// rv is a precondition; base is the version the patch is computed
	// against, when known.
	var rv, base string
	if api == nil && useWatch {
		if w := m.watched(t); w != nil {
			api, rv, base = &w.Status, w.ResourceVersion, w.ResourceVersion
		}
	}
	if api == nil {
		cur, err := m.read(ctx, t)
		if err != nil {
			return sent{}, err
		}
		api, base = &cur.Status, cur.ResourceVersion
	}
	res, err := m.patch(ctx, pod, t, ours, api, rv)
	if rv != "" && apierrors.IsConflict(err) {
		watchConflicts.Inc()
		cur, rerr := m.read(ctx, t)
		if rerr != nil {
			return sent{}, rerr
		}
		base = cur.ResourceVersion
		res, err = m.patch(ctx, pod, t, ours, &cur.Status, "")
	}
	if err == nil {
		if !res.patched {
			res.rv = base
		}
		return res, nil
	}
	switch {
	case apierrors.IsNotFound(err):
		return sent{}, fmt.Errorf("patch status of pod %s: %w", t, errGone)
	case apierrors.IsInvalid(err), apierrors.IsConflict(err), apierrors.IsForbidden(err):
		// A UID precondition that failed shows as one of these; only the
		// object itself tells whether it is still ours.
		if _, rerr := m.read(ctx, t); errors.Is(rerr, errGone) {
			return sent{}, rerr
		}
		if apierrors.IsInvalid(err) {
			return sent{}, fmt.Errorf("patch status of pod %s: %w: %w", t, errRejected, err)
		}
	}
	return sent{}, fmt.Errorf("patch status of pod %s: %w", t, err)
}

// watched returns the watch's copy of the target, nil when there is none
// or it is another object of the same name (the read then tells which).
// A copy without a resourceVersion could not be a precondition.
func (m *Manager) watched(t target) *v1.Pod {
	if m.cfg.Watched == nil {
		return nil
	}
	w, ok := m.cfg.Watched(t.namespace, t.name)
	if !ok || w.UID != t.uid || w.ResourceVersion == "" {
		watchMisses.Inc()
		return nil
	}
	watchHits.Inc()
	return w
}

// patch sends the patch from api to ours merged with the fields others
// own, if there is a difference. rv, if set, is a precondition. Errors are
// the API server's, unwrapped.
func (m *Manager) patch(ctx context.Context, pod *v1.Pod, t target, ours v1.PodStatus, api *v1.PodStatus, rv string) (sent, error) {
	next := mergeStatus(pod, api, ours, time.Now())
	patch, err := statusPatch(t.uid, rv, api, &next.status)
	if err != nil {
		return sent{}, err
	}
	if patch == nil {
		return sent{api: api, gated: next.gated}, nil
	}
	rctx, cancel := context.WithTimeout(ctx, m.cfg.RequestTimeout)
	defer cancel()
	got, err := m.cfg.Client.CoreV1().Pods(t.namespace).Patch(rctx, t.name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}, "status")
	if err != nil {
		return sent{}, err
	}
	return sent{api: &got.Status, rv: got.ResourceVersion, patched: true, gated: next.gated}, nil
}

// read gets the target's API object, failing with errGone when it is not
// there or is another object of the same name.
func (m *Manager) read(ctx context.Context, t target) (*v1.Pod, error) {
	rctx, cancel := context.WithTimeout(ctx, m.cfg.RequestTimeout)
	defer cancel()
	pod, err := m.cfg.Client.CoreV1().Pods(t.namespace).Get(rctx, t.name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return nil, fmt.Errorf("get pod %s: %w", t, errGone)
	case err != nil:
		return nil, fmt.Errorf("get pod %s: %w", t, err)
	case pod.UID != t.uid:
		return nil, fmt.Errorf("get pod %s: has uid %s, want %s: %w", t, pod.UID, t.uid, errGone)
	}
	return pod, nil
}

// notApplied reports failures that prove the request changed nothing, so
// the API object's status known before it still holds: the connection was
// refused, or the API server turned the request away before handling it.
// After any other failure (a timeout, a reset) the patch may have landed.
func notApplied(err error) bool {
	return utilnet.IsConnectionRefused(err) || apierrors.IsServiceUnavailable(err) || apierrors.IsTooManyRequests(err)
}
