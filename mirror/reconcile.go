package mirror

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podline/podline/sources"
)

// errNotMirror: the static pod's namespace/name is held by a pod that is
// not a mirror pod, which the manager must not delete.
var errNotMirror = errors.New("the name is taken by a pod that is not a mirror pod")

// reconcile makes one pass: plan under the lock, then the requests without
// it. It returns when to look again.
func (m *Manager) reconcile(ctx context.Context) time.Duration {
	m.mu.Lock()
	if !m.seen {
		m.mu.Unlock()
		return m.period
	}
	rounds.Inc()
	now := m.now()
	m.pruneLocked(now)
	statics := make(map[podName]*v1.Pod, len(m.statics))
	for _, s := range m.statics {
		statics[nameOf(s)] = s
	}
	mirrors := make(map[podName]mirrorRef, len(m.observed)+len(m.learned))
	for name := range m.observed {
		if ref, ok := m.lookupLocked(name, now); ok {
			mirrors[name] = ref
		}
	}
	for name := range m.learned {
		if ref, ok := m.lookupLocked(name, now); ok {
			mirrors[name] = ref
		}
	}
	acts := plan(statics, mirrors, m.ready)
	m.mu.Unlock()

	nodeUID := m.nodeUID()
	waiting := false
	for _, a := range acts {
		if ctx.Err() != nil {
			return m.period
		}
		if a.op != opCreate && !m.delete(ctx, a.name, a.uid) {
			continue
		}
		if a.op == opDelete {
			continue
		}
		if nodeUID == "" {
			waiting = true
			continue
		}
		m.create(ctx, a.static, nodeUID)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if waiting {
		if !m.loggedWait {
			m.log.Info("waiting for the node to register before creating mirror pods", "node", m.nodeName)
			m.loggedWait = true
		}
		return nodeWait
	}
	m.loggedWait = false
	return m.period
}

// pruneLocked forgets learned facts the watch should have confirmed by now.
func (m *Manager) pruneLocked(now time.Time) {
	for name, l := range m.learned {
		if now.Sub(l.at) >= learnedTTL {
			delete(m.learned, name)
		}
	}
	for uid, at := range m.gone {
		if now.Sub(at) >= learnedTTL {
			delete(m.gone, uid)
		}
	}
}

// create makes the mirror of static. If the name is taken, the pod there is
// learned so the next pass can judge it.
func (m *Manager) create(ctx context.Context, static *v1.Pod, nodeUID types.UID) {
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	name := nameOf(static)
	pods := m.client.CoreV1().Pods(name.namespace)
	out, err := pods.Create(ctx, mirrorPodOf(static, m.nodeName, nodeUID), metav1.CreateOptions{})
	if err == nil {
		createOK.Inc()
		m.learn(name, out)
		m.succeeded(name, "created mirror pod", "uid", out.UID)
		return
	}
	createErr.Inc()
	if apierrors.IsAlreadyExists(err) {
		cur, gerr := pods.Get(ctx, name.name, metav1.GetOptions{})
		switch {
		case gerr != nil:
			err = fmt.Errorf("%w; get the existing pod: %w", err, gerr)
		case !sources.IsMirrorPod(cur):
			err = errNotMirror
		default:
			m.learn(name, cur)
			m.wake() // judge it now rather than a period later
			return
		}
	}
	m.failed(name, "cannot create mirror pod; will retry", err)
}

// delete removes one mirror pod at once. The UID precondition makes sure it
// is the pod planned for, not a newer one under the same name. It reports
// whether that pod is gone.
func (m *Manager) delete(ctx context.Context, name podName, uid types.UID) bool {
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	err := m.client.CoreV1().Pods(name.namespace).Delete(ctx, name.name, metav1.DeleteOptions{
		GracePeriodSeconds: new(int64),
		Preconditions:      &metav1.Preconditions{UID: &uid},
	})
	// Not found, or a conflict on the precondition: that pod is gone.
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		deleteErr.Inc()
		m.failed(name, "cannot delete mirror pod; will retry", err)
		return false
	}
	deleteOK.Inc()
	m.mu.Lock()
	m.gone[uid] = m.now()
	if l, ok := m.learned[name]; ok && l.ref.uid == uid {
		delete(m.learned, name)
	}
	m.mu.Unlock()
	m.succeeded(name, "deleted mirror pod", "uid", uid)
	return true
}

// learn records what a create or get returned, unless the watch already
// shows that very pod: its event can arrive before the response, and a
// learned fact nothing confirms later would outlive a deletion of the pod
// for learnedTTL, holding back the new mirror.
func (m *Manager) learn(name podName, p *v1.Pod) {
	m.mu.Lock()
	if o := m.observed[name]; o != nil && o.UID == p.UID {
		delete(m.learned, name)
	} else {
		m.learned[name] = learnedRef{ref: refOf(p), at: m.now()}
	}
	m.mu.Unlock()
}

func (m *Manager) succeeded(name podName, msg string, args ...any) {
	m.mu.Lock()
	delete(m.logged, name)
	m.mu.Unlock()
	m.log.Info(msg, append([]any{"pod", name.namespace + "/" + name.name}, args...)...)
}

// failed logs a failure the first time it happens to a pod, and again only
// when the reason changes.
func (m *Manager) failed(name podName, msg string, err error) {
	m.mu.Lock()
	repeat := m.logged[name] == err.Error()
	m.logged[name] = err.Error()
	m.mu.Unlock()
	if !repeat {
		m.log.Error(msg, "pod", name.namespace+"/"+name.name, "err", err)
	}
}

// mirrorPodOf builds the mirror of a static pod: its name, labels,
// annotations (the local ones too, as kubelet's mirrors show where the pod
// came from) and spec, bound to this node, marked with the static pod's hash
// and owned by the Node. Owner and hash are what NodeRestriction checks.
func mirrorPodOf(static *v1.Pod, nodeName string, nodeUID types.UID) *v1.Pod {
	annotations := maps.Clone(static.Annotations)
	if annotations == nil {
		annotations = make(map[string]string, 1)
	}
	annotations[sources.ConfigMirrorAnnotation] = hashOf(static)
	p := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:   static.Namespace,
			Name:        static.Name,
			Labels:      maps.Clone(static.Labels),
			Annotations: annotations,
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: v1.SchemeGroupVersion.String(),
				Kind:       "Node",
				Name:       nodeName,
				UID:        nodeUID,
				Controller: new(true),
			}},
		},
		Spec: *static.Spec.DeepCopy(),
	}
	p.Spec.NodeName = nodeName
	return p
}
