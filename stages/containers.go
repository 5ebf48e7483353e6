package stages

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podline/podline/cri"
	"github.com/podline/podline/pleg"
	"github.com/podline/podline/podspec"
)

// minKillGrace is the shortest time a container gets to stop: even a
// forced deletion gives it a moment to flush, as the kubelet does.
const minKillGrace = 2 * time.Second

// ContainerStage starts, restarts and stops a pod's containers according
// to PlanContainers.
type ContainerStage struct {
	Runtime ContainerRuntime
	Images  ImageRuntime
	Cache   *pleg.Cache
	Node    *Node
	// Watcher, if set, learns of every container started and removed.
	Watcher Watcher
	Events  Recorder
	// Env reads the configMaps and secrets of envFrom and valueFrom; nil
	// without an API server.
	Env EnvSource
	// Services gives the service variables; nil without an API server.
	Services ServiceSource
	// Pulls runs the image pulls (nil: a serializing puller of its own);
	// PullSecrets reads imagePullSecrets, nil without an API server.
	Pulls       *ImagePuller
	PullSecrets PullSecretSource
	// Probes runs the pods' probes; nil while none run (a running
	// container is then started and ready).
	Probes Prober
	// Log has what events leave out: a failed hook's message.
	Log        *slog.Logger
	pullerOnce sync.Once

	// life ends when the pipeline stops: the postStart hooks run under
	// it, and their end asks for a pass through wake (see
	// runInBackground).
	life       context.Context
	wake       func(types.UID)
	preStopped preStopOnce
}

func (s *ContainerStage) log() *slog.Logger {
	if s.Log == nil {
		return slog.Default()
	}
	return s.Log
}

func (s *ContainerStage) Handle(w *Work) Outcome {
	if w.Teardown {
		return s.teardown(w)
	}
	pod, now := w.Pod, time.Now()
	rt := s.Cache.Get(w.UID)
	sb := rt.CurrentSandbox()
	if sb == nil || sb.State != pleg.SandboxReady {
		return Next()
	}
	hookKills := s.collectPostStart(w, rt)
	probes := withPostStart(syncProbes(s.Probes, pod, postStartView(rt, w.Sync.postStart), s.Node), w.Sync.postStart)
	plan := PlanContainers(pod, rt, &w.Sync.Crash, probes, w.Sync.Started, now)
	plan.Kill = withKills(hookKills, plan.Kill)
	if len(w.Sync.postStart) > 0 {
		// The kubelet's sync of the pod is inside the hook: nothing else
		// of it starts until the hook returned.
		plan.Start = nil
	}
	w.Sync.Waiting = plan.Waiting
	for name, wait := range plan.Waiting {
		if wait.Reason == ReasonCrashLoopBackOff {
			recorderOr(s.Events).PodEvent(pod, name, v1.EventTypeWarning, "BackOff",
				fmt.Sprintf("Back-off restarting failed container %s in pod %s", name, kubeletPodName(pod)))
		}
	}
	w.RequeueAfter(plan.RetryAfter)
	for _, id := range plan.Remove {
		if err := s.Runtime.RemoveContainer(w.Context(), id); err != nil && !cri.IsNotFound(err) {
			return Fail(fmt.Errorf("remove dead container %s: %w", id, err))
		}
		s.Cache.RemoveContainer(w.UID, id)
		watcherOr(s.Watcher).ContainerRemoved(id)
	}
	if len(plan.Kill) > 0 {
		return Outcome{Async: s.kill(pod, w.UID, plan.Kill, podGrace(pod))}
	}
	sandboxCfg := podspec.SandboxConfig(pod, sb.Attempt, s.Node)
	var errs []error
	for _, act := range plan.Start {
		hooked, err := s.start(w, act, sb, sandboxCfg)
		if err != nil {
			if waitingOnImage(err) {
				continue // retried on the image's schedule (see ensureImage), not the step back-off
			}
			errs = append(errs, fmt.Errorf("start container %s: %w", act.Spec.Name, err))
			continue
		}
		if hooked {
			// The containers after it wait for its postStart hook.
			break
		}
		if act.Init && isSidecar(act.Spec) {
			// What waits on a sidecar waits for it to have started, which
			// no runtime event will announce (it keeps running): plan
			// again now that it runs. A startup probe's success comes
			// from the prober.
			w.RequeueAfter(time.Nanosecond)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return Fail(err)
	}
	return Next()
}

// start pulls the image, creates and starts one container, recording each
// step in the cache so the next plan sees it without an inspection, then
// starts its postStart hook; hooked reports a hook now running.
func (s *ContainerStage) start(w *Work, act StartAction, sb *pleg.Sandbox, sandboxCfg *runtimeapi.PodSandboxConfig) (hooked bool, err error) {
	ctx, pod, name := w.Context(), w.Pod, act.Spec.Name
	imageRef, err := s.ensureImage(w, act.Spec, sandboxCfg)
	if err != nil {
		return false, err
	}
	ips := sb.IPs
	if pod.Spec.HostNetwork {
		ips = s.Node.IPs
	}
	ev := recorderOr(s.Events)
	if act.Env, err = FetchEnvObjects(ctx, s.Env, s.Services, pod, act.Spec); err != nil {
		w.Sync.setWaiting(name, "CreateContainerConfigError", err.Error())
		ev.PodEvent(pod, name, v1.EventTypeWarning, "Failed", "Error: "+err.Error())
		return false, err
	}
	cfg, err := podspec.ContainerConfig(pod, act, imageRef, ips, s.Node)
	if err != nil {
		w.Sync.setWaiting(name, "CreateContainerConfigError", err.Error())
		ev.PodEvent(pod, name, v1.EventTypeWarning, "Failed", "Error: "+err.Error())
		return false, err
	}
	if err := s.verifySecurity(w, act, imageRef, cfg); err != nil {
		return false, err
	}
	if err := s.bindSubPaths(pod, act, cfg); err != nil {
		w.Sync.setWaiting(name, "CreateContainerConfigError", err.Error())
		ev.PodEvent(pod, name, v1.EventTypeWarning, "Failed", "Error: "+err.Error())
		return false, err
	}
	if err := s.prepareFiles(w, act, ips); err != nil {
		return false, err
	}
	t0 := time.Now()
	id, err := s.Runtime.CreateContainer(ctx, sb.ID, cfg, sandboxCfg)
	w.timeRuntime(t0)
	if err != nil {
		w.Sync.setWaiting(name, "CreateContainerError", err.Error())
		ev.PodEvent(pod, name, v1.EventTypeWarning, "Failed", "Error: "+err.Error())
		return false, err
	}
	ev.PodEvent(pod, name, v1.EventTypeNormal, "Created", "Created container: "+name)
	c := &pleg.Container{
		ID: id, SandboxID: sb.ID, Name: name, Attempt: act.Attempt, State: pleg.ContainerCreated,
		Hash: cfg.Annotations[cri.AnnotationContainerHash], Init: act.Init, Image: act.Spec.Image, ImageRef: imageRef,
		CreatedAt: time.Now(),
	}
	s.Cache.UpsertContainer(w.UID, c)
	if act.Attempt > 0 {
		// A restart: the next failure waits longer.
		w.Sync.Crash.Next(name, time.Now())
	}
	t0 = time.Now()
	err = s.Runtime.StartContainer(ctx, id)
	w.timeRuntime(t0)
	if err != nil {
		w.Sync.setWaiting(name, "RunContainerError", err.Error())
		ev.PodEvent(pod, name, v1.EventTypeWarning, "Failed", "Error: "+err.Error())
		return false, err
	}
	ev.PodEvent(pod, name, v1.EventTypeNormal, "Started", "Started container "+name)
	running := *c
	running.State, running.StartedAt = pleg.ContainerRunning, time.Now()
	s.Cache.UpsertContainer(w.UID, &running)
	watcherOr(s.Watcher).ContainerStarted(w.UID, sb.ID, id, sandboxCfg.GetLinux().GetCgroupParent())
	delete(w.Sync.Waiting, name)
	return s.startPostStart(w, act.Spec, id, hookAddress(pod, sb, s.Node)), nil
}

// bindSubPaths makes and binds each subPath mount of the container
// (see SubPathBind), after the config named the bind targets.
func (s *ContainerStage) bindSubPaths(pod *v1.Pod, act StartAction, cfg *runtimeapi.ContainerConfig) error {
	binds, err := podspec.SubPathBinds(pod, act.Spec, s.Node, cfg.Envs)
	if err != nil {
		return err
	}
	for _, b := range binds {
		if err := prepareSubPath(b); err != nil {
			return err
		}
	}
	return nil
}

func (ps *PodSync) setWaiting(name, reason, msg string) {
	if ps.Waiting == nil {
		ps.Waiting = make(map[string]Waiting)
	}
	ps.Waiting[name] = Waiting{Reason: reason, Message: msg}
}
