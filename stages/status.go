package stages

import (
	"log/slog"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podline/podline/pleg"
)

// StatusStage computes each pod's status at the end of its pass and
// publishes it.
type StatusStage struct {
	Store *StatusStore
	Cache *pleg.Cache
	Node  *Node
	// RuntimeName prefixes container IDs ("containerd://...").
	RuntimeName string
	// OnFinished is called when a pod reaches Succeeded or Failed, so its
	// admission share is released.
	OnFinished func(uid types.UID)
	// Probes runs the pods' probes; nil while none run (a running
	// container is then started and ready).
	Probes Prober
	Log    *slog.Logger

	messages terminationMessages
}

func (s *StatusStage) Handle(w *Work) Outcome {
	if w.Removed {
		if s.Probes != nil {
			s.Probes.Forget(w.UID)
		}
		s.Store.Delete(w.UID)
		s.messages.forget(w.UID)
		s.log().Info("pod removed", "pod", w.PodName(), "uid", w.UID)
		return Next()
	}
	prev := s.Store.current(w.UID)
	now := time.Now()
	rt := s.Cache.Get(w.UID)
	st := s.compute(w, prev, rt, now)
	s.Store.Set(w.Pod, st)
	observeExits(w.Sync, rt, time.Now(), prev != nil)
	if !w.Sync.StartReported && allRunning(&st) {
		w.Sync.StartReported = true
		took := now.Sub(w.Sync.FirstSeen)
		podStartTime.Update(took.Seconds())
		s.log().Info("pod running", "pod", w.PodName(), "uid", w.UID, "took", took.Round(time.Millisecond))
	}
	if prev == nil || prev.Phase != st.Phase {
		if rej := w.Sync.Rejection; rej != nil {
			s.log().Warn("pod rejected", "pod", w.PodName(), "reason", rej.Reason, "message", rej.Message)
		} else {
			s.log().Debug("pod phase", "pod", w.PodName(), "phase", st.Phase)
		}
	}
	finished := st.Phase == v1.PodSucceeded || st.Phase == v1.PodFailed
	if finished && (prev == nil || prev.Phase != st.Phase) && s.OnFinished != nil {
		s.OnFinished(w.UID)
	}
	return Next()
}

// PublishPending publishes the status of a pod that has none yet, at the
// start of its first pass: the kubelet shows a pod from its admission on,
// Pending with its containers ContainerCreating, and so must /pods and the
// API server while an image pull or a volume holds the pass for minutes.
// It is a no-op for a pod with a status. Passes of one pod never overlap,
// so this never races the pod's own Handle.
func (s *StatusStage) PublishPending(w *Work) {
	if s.Store.current(w.UID) != nil {
		return
	}
	s.Store.Set(w.Pod, s.compute(w, nil, s.Cache.Get(w.UID), time.Now()))
}

// compute is the pod's status from its pass and the runtime's view.
func (s *StatusStage) compute(w *Work, prev *v1.PodStatus, rt *pleg.Pod, now time.Time) v1.PodStatus {
	// A container whose postStart hook has not returned is not running
	// yet, for the status and the probes.
	view := postStartView(rt, w.Sync.postStart)
	return PodStatus(StatusInput{
		Pod: w.Pod, Runtime: view, Sync: w.Sync, Node: s.Node,
		RuntimeName: s.RuntimeName, Now: now, Prev: prev,
		Messages: s.messages.of(s.Node, w.Pod, rt), Probes: syncProbes(s.Probes, w.Pod, view, s.Node),
	})
}

func (s *StatusStage) log() *slog.Logger {
	if s.Log == nil {
		return slog.Default()
	}
	return s.Log
}

func allRunning(st *v1.PodStatus) bool {
	if len(st.ContainerStatuses) == 0 {
		return false
	}
	for _, cs := range st.ContainerStatuses {
		if cs.State.Running == nil {
			return false
		}
	}
	return true
}

// observeExits records, once per container instance, how long after its
// exit the status showing it was published. The first status of a pod
// only takes note: exits from before podline (re)started are not latency.
func observeExits(sync *PodSync, rt *pleg.Pod, published time.Time, observe bool) {
	if rt == nil {
		return
	}
	for _, c := range rt.Containers {
		if c.State != pleg.ContainerExited || c.FinishedAt.IsZero() || sync.ExitsReported[c.ID] {
			continue
		}
		if sync.ExitsReported == nil {
			sync.ExitsReported = make(map[string]bool)
		}
		sync.ExitsReported[c.ID] = true
		if d := published.Sub(c.FinishedAt); observe && d >= 0 {
			exitToStatus.Update(d.Seconds())
		}
	}
	// Forget instances the runtime no longer has (only when there are
	// any to forget: this runs on every pass).
	if len(sync.ExitsReported) == 0 {
		return
	}
	for id := range sync.ExitsReported {
		if rt.Container(id) == nil {
			delete(sync.ExitsReported, id)
		}
	}
}
