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
	rt := s.Cache.Get(w.UID)
	if rt == nil {
		return Next()
	}
	var kills []KillAction
	grace := time.Duration(v1.DefaultTerminationGracePeriodSeconds) * time.Second
	for _, c := range rt.Containers {
		if c.State == pleg.ContainerRunning || c.State == pleg.ContainerCreated || c.State == pleg.ContainerUnknown {
			kills = append(kills, KillAction{ID: c.ID, Name: c.Name, SandboxID: c.SandboxID, Reason: "pod is being removed"})
		}
	}
	if len(kills) == 0 {
		return Next()
	}
	if w.Pod != nil {
		grace = podGrace(w.Pod)
	}
	return Outcome{Async: s.kill(w.Pod, w.UID, kills, grace)}
}

// kill stops containers in parallel, each with the whole grace period,
// and records their final state. pod is nil for an orphan.
func (s *ContainerStage) kill(pod *v1.Pod, uid types.UID, kills []KillAction, grace time.Duration) func(context.Context) error {
	return func(ctx context.Context) error {
		if pod != nil {
			for _, k := range kills {
				recorderOr(s.Events).PodEvent(pod, k.Name, v1.EventTypeNormal, "Killing", "Stopping container "+k.Name)
			}
		}
		var wg sync.WaitGroup
		errs := make([]error, len(kills))
		for i, k := range kills {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[i] = s.stopOne(ctx, uid, k, grace)
			}()
		}
		wg.Wait()
		return errors.Join(errs...)
	}
}

func (s *ContainerStage) stopOne(ctx context.Context, uid types.UID, k KillAction, grace time.Duration) error {
	err := s.Runtime.StopContainer(ctx, k.ID, grace)
	if cri.IsNotFound(err) {
		s.Cache.RemoveContainer(uid, k.ID)
		return nil
	}
	if err != nil {
		return fmt.Errorf("stop container %s (%s): %w", k.Name, k.Reason, err)
	}
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
