package stages

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podline/podline/cri"
	"github.com/podline/podline/pleg"
	"github.com/podline/podline/podspec"
)

// podGrace is how long the pod's containers get to stop.
func podGrace(pod *v1.Pod) time.Duration {
	return max(time.Duration(podspec.GracePeriod(pod))*time.Second, minKillGrace)
}

// teardown stops every running container of the pod, in the background.
func (s *ContainerStage) teardown(w *Work) Outcome {
	cancelPostStart(w.Sync)
	rt := s.Cache.Get(w.UID)
	if rt == nil {
		return Next()
	}
	kills := teardownKills(rt, w.Pod == nil)
	if len(kills) == 0 {
		return Next()
	}
	grace := time.Duration(v1.DefaultTerminationGracePeriodSeconds) * time.Second
	if w.Pod != nil {
		grace = podGrace(w.Pod)
	}
	return Outcome{Async: s.kill(w.Pod, w.UID, kills, grace)}
}

// teardownKills lists the containers of rt that a teardown stops. An
// orphan's spec is gone (podline restarted after its pod was deleted), so
// each of its containers stops within the grace period recorded on it when
// it was made, as the kubelet restores it from the container; only a
// container without one gets the default.
func teardownKills(rt *pleg.Pod, orphan bool) []KillAction {
	var kills []KillAction
	for _, c := range rt.Containers {
		if c.State != pleg.ContainerRunning && c.State != pleg.ContainerCreated && c.State != pleg.ContainerUnknown {
			continue
		}
		k := KillAction{ID: c.ID, Name: c.Name, SandboxID: c.SandboxID, Reason: "pod is being removed"}
		if orphan {
			k.Grace = c.Grace
		}
		kills = append(kills, k)
	}
	return kills
}

// killWaves orders the stops of a pod's containers as the kubelet orders
// a pod's termination: everything but the sidecars (app containers, init
// containers, strays) stops together first; then the sidecars, one at a
// time, last in the spec first. A sidecar serves the containers after it
// (a proxy, a log shipper), so it outlives them. An orphan's spec is
// unknown (pod nil): all its containers stop together.
func killWaves(pod *v1.Pod, kills []KillAction) [][]KillAction {
	if pod == nil {
		return [][]KillAction{kills}
	}
	var first []KillAction
	for _, k := range kills {
		if !sidecarNamed(pod, k.Name) {
			first = append(first, k)
		}
	}
	var waves [][]KillAction
	if len(first) > 0 {
		waves = append(waves, first)
	}
	for i := len(pod.Spec.InitContainers) - 1; i >= 0; i-- {
		spec := &pod.Spec.InitContainers[i]
		if !isSidecar(spec) {
			continue
		}
		var wave []KillAction
		for _, k := range kills {
			if k.Name == spec.Name {
				wave = append(wave, k)
			}
		}
		if len(wave) > 0 {
			waves = append(waves, wave)
		}
	}
	return waves
}

// killGrace is the grace period of one stop: its own (a probe's), else
// the wave's, never under minKillGrace.
func killGrace(k KillAction, wave time.Duration) time.Duration {
	if k.Grace != nil {
		return max(time.Duration(*k.Grace)*time.Second, minKillGrace)
	}
	return wave
}

// waveGrace is the grace period of a wave that starts elapsed after the
// first: what is left of the pod's, as the kubelet gives its sidecars, but
// never less than minKillGrace.
func waveGrace(grace, elapsed time.Duration) time.Duration {
	return max(grace-elapsed, minKillGrace)
}

// kill stops containers wave after wave (killWaves), the containers of a
// wave in parallel, and records their final state. The first wave has the
// whole grace period, the later ones what is left of it. Every container
// is told it is being killed, and its preStop hook started, at once, as
// the kubelet kills each container in a goroutine of its own that waits
// for its turn only to stop it. pod is nil for an orphan.
func (s *ContainerStage) kill(pod *v1.Pod, uid types.UID, kills []KillAction, grace time.Duration) func(context.Context) error {
	return func(ctx context.Context) error {
		began := time.Now()
		if pod != nil {
			for _, k := range kills {
				msg := k.Event
				if msg == "" {
					msg = "Stopping container " + k.Name
				}
				recorderOr(s.Events).PodEvent(pod, k.Name, v1.EventTypeNormal, "Killing", msg)
			}
		}
		hooks := s.startPreStops(ctx, pod, uid, kills, began)
		var errs []error
		for i, wave := range killWaves(pod, kills) {
			g := grace
			if i > 0 {
				g = waveGrace(grace, time.Since(began))
			}
			errs = append(errs, s.stopWave(ctx, uid, wave, g, hooks))
		}
		return errors.Join(errs...)
	}
}

// stopWave stops containers in parallel and waits for them all. A
// container with a preStop hook is stopped once its hook returned, with
// what is left of its grace period.
func (s *ContainerStage) stopWave(ctx context.Context, uid types.UID, kills []KillAction, grace time.Duration, hooks map[string]*preStopRun) error {
	var wg sync.WaitGroup
	errs := make([]error, len(kills))
	for i, k := range kills {
		wg.Add(1)
		go func() {
			defer wg.Done()
			g := killGrace(k, grace)
			if hook := hooks[k.ID]; hook != nil {
				g = hook.wait()
			}
			errs[i] = s.stopOne(ctx, uid, k, g)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

func (s *ContainerStage) stopOne(ctx context.Context, uid types.UID, k KillAction, grace time.Duration) error {
	err := s.Runtime.StopContainer(ctx, k.ID, grace)
	if cri.IsNotFound(err) {
		s.Cache.RemoveContainer(uid, k.ID)
		s.preStopped.forget(k.ID)
		return nil
	}
	if err != nil {
		return fmt.Errorf("stop container %s (%s): %w", k.Name, k.Reason, err)
	}
	s.preStopped.forget(k.ID)
	st, err := s.Runtime.ContainerStatus(ctx, k.ID)
	switch {
	case cri.IsNotFound(err):
		s.Cache.RemoveContainer(uid, k.ID)
	case err != nil:
		return fmt.Errorf("inspect stopped container %s: %w", k.Name, err)
	default:
		s.Cache.UpsertContainer(uid, pleg.ContainerFromStatus(st, k.SandboxID))
	}
	return nil
}
