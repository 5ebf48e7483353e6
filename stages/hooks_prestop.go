package stages

import (
	"context"
	"fmt"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podline/podline/pleg"
	"github.com/podline/podline/podspec"
	"github.com/podline/podline/prober"
)

// A container's preStop hook runs before it is sent its stop signal, and
// its time counts against the grace period: the stop gets what is left,
// never less than minKillGrace, and a hook still running when the grace
// period ends is abandoned. A failed hook is a warning, FailedPreStopHook,
// and the stop goes on. As the kubelet, every hook of a kill starts at
// once, a sidecar's too: a sidecar's hook runs while the app containers
// stop, and only its stop signal waits for them.

// preStop is a hook to run before a container is stopped.
type preStop struct {
	handler *v1.LifecycleHandler
	spec    *v1.Container
	// grace is the container's grace period as the pod (or the probe
	// that failed) gives it, before minKillGrace: the hook may take all
	// of it, then the stop gets at least minKillGrace.
	grace time.Duration
}

// preStopOf returns the hook to run before c is stopped, nil for none:
// only a running container (one that never started has nothing to shut
// down) of a known spec (an orphan's is not), and only when the grace
// period leaves time for it, as the kubelet has it.
func preStopOf(pod *v1.Pod, c *pleg.Container, k KillAction) *preStop {
	if pod == nil || c == nil || c.State != pleg.ContainerRunning {
		return nil
	}
	spec := specNamed(pod, k.Name)
	if spec == nil || spec.Lifecycle == nil || spec.Lifecycle.PreStop == nil {
		return nil
	}
	grace := podspec.GracePeriod(pod)
	if k.Grace != nil {
		grace = *k.Grace
	}
	if grace <= 0 {
		return nil
	}
	return &preStop{handler: spec.Lifecycle.PreStop, spec: spec, grace: time.Duration(grace) * time.Second}
}

// specNamed is the pod's app or init container of that name, nil if none.
func specNamed(pod *v1.Pod, name string) *v1.Container {
	for i := range pod.Spec.Containers {
		if pod.Spec.Containers[i].Name == name {
			return &pod.Spec.Containers[i]
		}
	}
	for i := range pod.Spec.InitContainers {
		if pod.Spec.InitContainers[i].Name == name {
			return &pod.Spec.InitContainers[i]
		}
	}
	return nil
}

// hookAddress is where an httpGet hook without a host goes: the pod's
// address, the node's for a host-network pod.
func hookAddress(pod *v1.Pod, sb *pleg.Sandbox, node *Node) string {
	if pod.Spec.HostNetwork && node != nil && len(node.IPs) > 0 {
		return node.IPs[0]
	}
	if sb != nil && len(sb.IPs) > 0 {
		return sb.IPs[0]
	}
	return ""
}

// preStopRun is one container's preStop hook in a kill.
type preStopRun struct {
	ctx  context.Context // ends with the grace period
	done chan struct{}
	// grace is the container's whole grace period and began when the
	// kill, and the hook, started.
	grace time.Duration
	began time.Time
}

// wait waits for the hook, or the end of the grace period, and returns
// what is left of it for the stop.
func (r *preStopRun) wait() time.Duration {
	select {
	case <-r.done:
	case <-r.ctx.Done():
	}
	return max(r.grace-time.Since(r.began), minKillGrace)
}

// preStopOnce holds the container instances whose preStop hook ran, so a
// stop that failed and is tried again does not run it a second time.
type preStopOnce struct {
	mu  sync.Mutex
	ran map[string]bool
}

// claim reports whether id's hook may run, and marks it as run.
func (o *preStopOnce) claim(id string) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.ran[id] {
		return false
	}
	if o.ran == nil {
		o.ran = make(map[string]bool)
	}
	o.ran[id] = true
	return true
}

// forget drops an instance that stopped: it never runs again.
func (o *preStopOnce) forget(id string) {
	o.mu.Lock()
	delete(o.ran, id)
	o.mu.Unlock()
}

// startPreStops starts the preStop hooks of a kill that began at began,
// each bounded by its container's grace period, and returns them by
// container ID.
func (s *ContainerStage) startPreStops(ctx context.Context, pod *v1.Pod, uid types.UID, kills []KillAction, began time.Time) map[string]*preStopRun {
	if pod == nil {
		return nil
	}
	rt := s.Cache.Get(uid)
	var runs map[string]*preStopRun
	for _, k := range kills {
		hook := preStopOf(pod, rt.Container(k.ID), k)
		if hook == nil || !s.preStopped.claim(k.ID) {
			continue
		}
		ip := hookAddress(pod, sandboxNamed(rt, k.SandboxID), s.Node)
		if runs == nil {
			runs = make(map[string]*preStopRun)
		}
		runs[k.ID] = s.startPreStop(ctx, pod, hook, k.ID, ip, began)
	}
	return runs
}

func (s *ContainerStage) startPreStop(ctx context.Context, pod *v1.Pod, hook *preStop, id, ip string, began time.Time) *preStopRun {
	hctx, cancel := context.WithDeadline(ctx, began.Add(hook.grace))
	run := &preStopRun{ctx: hctx, done: make(chan struct{}), grace: hook.grace, began: began}
	h, spec := hook.handler, hook.spec
	go func() {
		defer close(run.done)
		defer cancel()
		res := prober.RunHook(hctx, s.Runtime, h, spec, id, ip)
		ev := recorderOr(s.Events)
		if res.Fallback != "" {
			ev.PodEvent(pod, "", v1.EventTypeWarning, "LifecycleHTTPFallback",
				fmt.Sprintf("request to HTTPS lifecycle hook %s got HTTP response, retry with HTTP succeeded", res.Fallback))
		}
		// A hook cut by the end of the grace period was abandoned, not
		// failed; one cut by the pass's end was interrupted.
		if res.Err == nil || hctx.Err() != nil {
			return
		}
		s.log().Warn("preStop hook failed", "pod", pod.Namespace+"/"+pod.Name, "container", spec.Name, "containerID", id,
			"message", res.Message(h, spec.Name, kubeletPodName(pod)))
		ev.PodEvent(pod, spec.Name, v1.EventTypeWarning, "FailedPreStopHook", "PreStopHook failed")
	}()
	return run
}

// sandboxNamed is the pod's sandbox with that ID, nil if unknown.
func sandboxNamed(rt *pleg.Pod, id string) *pleg.Sandbox {
	if rt == nil {
		return nil
	}
	for _, sb := range rt.Sandboxes {
		if sb.ID == id {
			return sb
		}
	}
	return nil
}
