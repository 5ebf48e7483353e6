package stages

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/podline/podline/cgroupfs"
	"github.com/podline/podline/cri"
	"github.com/podline/podline/pleg"
	"github.com/podline/podline/podspec"
)

// SandboxStage makes sure a pod has exactly one ready sandbox while it
// should run, stops it when the pod has finished, and removes it (with the
// pod's cgroup and log directory) on teardown.
type SandboxStage struct {
	Runtime SandboxRuntime
	Cache   *pleg.Cache
	Node    *Node
	// Cgroups, if set, removes pod cgroups (cgroupfs.Tree).
	Cgroups PodCgroupRemover
	// Limits, if set, makes the pod cgroup with the pod's limits before
	// its sandbox starts (the runtime would make it without them).
	Limits PodCgroups
	// PodPidsLimit, if set, is every pod cgroup's process limit
	// (--pod-max-pids): a node-wide bound, not something a pod asks for.
	PodPidsLimit *int64
	// RuntimeHandler selects the runtime's handler ("" = default).
	RuntimeHandler string
	// Watcher, if set, learns of every sandbox started and removed.
	Watcher Watcher
	Events  Recorder
}

func (s *SandboxStage) Handle(w *Work) Outcome {
	if w.Teardown {
		return s.teardown(w)
	}
	ctx, pod := w.Context(), w.Pod
	plan := PlanSandbox(pod, s.Cache.Get(w.UID), w.Sync.Started, time.Now())
	if plan.DeadlineEnding && !w.Sync.DeadlineReported {
		w.Sync.DeadlineReported = true
		recorderOr(s.Events).PodEvent(pod, "", v1.EventTypeNormal, ReasonDeadlineExceeded, MessageDeadlineExceeded)
	}
	if plan.Finished && (len(plan.Stop) > 0 || plan.Draining) && !w.Sync.FinishPublished {
		// Publish the finished pod first; stop its sandbox right after.
		w.Sync.FinishPublished = true
		w.RequeueAfter(time.Nanosecond)
		if plan.Draining {
			// Its containers too: their grace period may be long, and the
			// pod is Failed from its deadline on.
			return Skip(StageStatus)
		}
		return Next()
	}
	if plan.Draining {
		// The containers stage stops them in this pass; the sandbox goes
		// in the next.
		w.RequeueAfter(time.Nanosecond)
	}
	for _, id := range plan.Stop {
		if err := s.stop(w, id); err != nil {
			return Fail(err)
		}
	}
	for _, id := range plan.Remove {
		if err := s.Runtime.RemovePodSandbox(ctx, id); err != nil && !cri.IsNotFound(err) {
			return Fail(fmt.Errorf("remove old sandbox %s: %w", id, err))
		}
		s.Cache.RemoveSandbox(w.UID, id)
		watcherOr(s.Watcher).SandboxRemoved(id)
	}
	if !plan.Create {
		return Next()
	}
	if err := s.checkSandbox(pod); err != nil {
		return Fail(err)
	}
	cfg := podspec.SandboxConfig(pod, plan.Attempt, s.Node)
	if parent := cfg.GetLinux().GetCgroupParent(); parent != "" && s.Limits != nil {
		r := cgroupfs.PodResources(pod)
		r.PidsLimit = s.PodPidsLimit
		if err := s.Limits.EnsurePod(parent, r); err != nil {
			return Fail(fmt.Errorf("pod cgroup: %w", err))
		}
	}
	if err := os.MkdirAll(cfg.LogDirectory, 0o755); err != nil {
		return Fail(fmt.Errorf("create pod log directory: %w", err))
	}
	t0 := time.Now()
	id, err := s.Runtime.RunPodSandbox(ctx, cfg, s.RuntimeHandler)
	w.timeRuntime(t0)
	if err != nil {
		w.Sync.StartBlocked = Waiting{Reason: ReasonFailedCreatePodSandBox, Message: "Failed to create pod sandbox: " + err.Error()}
		recorderOr(s.Events).PodEvent(pod, "", v1.EventTypeWarning, ReasonFailedCreatePodSandBox, w.Sync.StartBlocked.Message)
		return Fail(fmt.Errorf("create sandbox: %w", err))
	}
	w.Sync.StartBlocked = Waiting{}
	if plan.Attempt > 0 {
		recorderOr(s.Events).PodEvent(pod, "", v1.EventTypeNormal, "SandboxChanged",
			"Pod sandbox changed, it will be killed and re-created.")
	}
	sb := &pleg.Sandbox{ID: id, Attempt: plan.Attempt, State: pleg.SandboxReady, CreatedAt: time.Now()}
	// The address only comes with the status; a failure here is not fatal,
	// the next inspection fills it in. A host-network pod's addresses are
	// the node's: as the kubelet does, it is not asked for.
	if !pod.Spec.HostNetwork {
		if st, err := s.Runtime.PodSandboxStatus(ctx, id); err == nil {
			sb = pleg.SandboxFromStatus(st)
		}
	}
	s.Cache.UpsertSandbox(w.UID, pod.Name, pod.Namespace, sb)
	watcherOr(s.Watcher).SandboxStarted(w.UID, id, cfg.GetLinux().GetCgroupParent())
	return Next()
}

func (s *SandboxStage) stop(w *Work, id string) error {
	if err := s.Runtime.StopPodSandbox(w.Context(), id); err != nil && !cri.IsNotFound(err) {
		return fmt.Errorf("stop sandbox %s: %w", id, err)
	}
	if rt := s.Cache.Get(w.UID); rt != nil {
		for _, sb := range rt.Sandboxes {
			if sb.ID == id {
				stopped := *sb
				stopped.State = pleg.SandboxNotReady
				s.Cache.UpsertSandbox(w.UID, "", "", &stopped)
			}
		}
	}
	return nil
}

// teardown stops every sandbox of the pod; once no source has the pod it
// also removes them, the pod cgroup and the pod's log directory.
func (s *SandboxStage) teardown(w *Work) Outcome {
	rt := s.Cache.Get(w.UID)
	if ready := readySandboxes(rt); len(ready) > 0 {
		return Outcome{Async: func(context.Context) error { return s.stopInBackground(w, ready) }}
	}
	name, ns := w.Sync.OrphanName, w.Sync.OrphanNamespace
	if w.Pod != nil {
		name, ns = w.Pod.Name, w.Pod.Namespace
	}
	if rt != nil {
		for _, sb := range rt.Sandboxes {
			if !w.Removed {
				continue
			}
			if err := s.Runtime.RemovePodSandbox(w.Context(), sb.ID); err != nil && !cri.IsNotFound(err) {
				return Fail(fmt.Errorf("remove sandbox %s: %w", sb.ID, err))
			}
			s.Cache.RemoveSandbox(w.UID, sb.ID)
			watcherOr(s.Watcher).SandboxRemoved(sb.ID)
		}
	}
	if !w.Removed {
		return Next()
	}
	if err := s.removeCgroup(w); err != nil {
		return Fail(err)
	}
	if name != "" {
		if err := removePodLogDir(s.Node, ns, name, w.UID); err != nil {
			return Fail(fmt.Errorf("remove pod log directory: %w", err))
		}
	}
	return Next()
}

// removeCgroup removes the pod cgroup. An orphan's QoS class is unknown,
// so every place it could be is tried.
func (s *SandboxStage) removeCgroup(w *Work) error {
	if s.Cgroups == nil {
		return nil
	}
	classes := []v1.PodQOSClass{v1.PodQOSGuaranteed, v1.PodQOSBurstable, v1.PodQOSBestEffort}
	if w.Pod != nil {
		classes = []v1.PodQOSClass{cgroupfs.QOSClass(w.Pod)}
	}
	var errs []error
	for _, q := range classes {
		if err := s.Cgroups.RemovePod(s.Node.Cgroups.PodParent(w.UID, q)); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
