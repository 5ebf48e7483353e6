package stages

import (
	"context"
	"fmt"
	"slices"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podline/podline/pleg"
	"github.com/podline/podline/prober"
)

// A container's postStart hook runs once the runtime started it, and the
// container counts as running only once the hook returned: the kubelet's
// startContainer does not return before, so its pod's status shows the
// container waiting to be created all that time, its probes do not run,
// nothing else of the pod starts (an app container after a sidecar whose
// hook waits for its proxy to be ready, say) and a sidecar has not
// started. A hook that fails gets its container stopped, after which the
// restart policy decides, as after any exit.
//
// The kubelet waits for the hook inside the pod's sync. Here the hook runs
// in the background and the pass goes on to publish the status (the pod's
// IP among it) instead of holding the pod for as long as the hook takes;
// its return asks for a pass of the pod, which reads how it went.

// postStartRun is one postStart hook running in the background. The pod's
// PodSync holds it by container ID until a pass takes its result; only
// res and done are shared with the goroutine running it.
type postStartRun struct {
	name    string
	handler *v1.LifecycleHandler
	cancel  context.CancelFunc
	// done closes once res is set.
	done chan struct{}
	res  prober.HookResult
}

func (r *postStartRun) finished() bool {
	select {
	case <-r.done:
		return true
	default:
		return false
	}
}

// runInBackground is how the pipeline hands the stage its lifetime, which
// the hooks run under, and a way to ask for a pass of a pod.
func (s *ContainerStage) runInBackground(ctx context.Context, wake func(types.UID)) {
	s.life, s.wake = ctx, wake
}

// startPostStart runs the container's postStart hook, if it has one, in
// the background, and reports whether it did. spec belongs to the pass's
// pod snapshot, which nothing modifies.
func (s *ContainerStage) startPostStart(w *Work, spec *v1.Container, id, ip string) bool {
	if spec.Lifecycle == nil || spec.Lifecycle.PostStart == nil {
		return false
	}
	life := s.life
	if life == nil {
		life = context.Background()
	}
	ctx, cancel := context.WithCancel(life)
	run := &postStartRun{name: spec.Name, handler: spec.Lifecycle.PostStart, cancel: cancel, done: make(chan struct{})}
	if w.Sync.postStart == nil {
		w.Sync.postStart = make(map[string]*postStartRun)
	}
	w.Sync.postStart[id] = run
	uid, exec, wake := w.UID, s.Runtime, s.wake
	go func() {
		run.res = prober.RunHook(ctx, exec, run.handler, spec, id, ip)
		cancel()
		close(run.done)
		if wake != nil {
			wake(uid)
		}
	}()
	return true
}

// reasonPostStartFailed is why a container whose postStart hook failed is
// stopped, in the errors of a failed stop.
const reasonPostStartFailed = "its postStart hook failed"

// collectPostStart takes in the pod's postStart hooks that returned and
// returns the containers to stop for a failed one: the kubelet's warning
// FailedPostStartHook (its message never in the event: the output may hold
// secrets; podline's log has it) and Killing "FailedPostStartHook". A hook
// whose container no longer runs is abandoned, as the kubelet's is when
// the container process fails: nothing waits for it any more.
func (s *ContainerStage) collectPostStart(w *Work, rt *pleg.Pod) []KillAction {
	var kills []KillAction
	ev := recorderOr(s.Events)
	for id, run := range w.Sync.postStart {
		c := rt.Container(id)
		if !run.finished() {
			if c == nil || c.State == pleg.ContainerExited {
				run.cancel()
				delete(w.Sync.postStart, id)
			}
			continue
		}
		delete(w.Sync.postStart, id)
		if host := run.res.Fallback; host != "" {
			ev.PodEvent(w.Pod, "", v1.EventTypeWarning, "LifecycleHTTPFallback",
				fmt.Sprintf("request to HTTPS lifecycle hook %s got HTTP response, retry with HTTP succeeded", host))
		}
		if run.res.Err == nil {
			continue
		}
		s.log().Warn("postStart hook failed", "pod", w.PodName(), "container", run.name, "containerID", id,
			"message", run.res.Message(run.handler, run.name, kubeletPodName(w.Pod)))
		ev.PodEvent(w.Pod, run.name, v1.EventTypeWarning, "FailedPostStartHook", "PostStartHook failed")
		if c != nil && c.State == pleg.ContainerRunning {
			kills = append(kills, KillAction{ID: id, Name: run.name, SandboxID: c.SandboxID,
				Reason: reasonPostStartFailed, Event: "FailedPostStartHook"})
		}
	}
	return kills
}

// withKills adds to first the kills of rest whose container first does
// not stop already: one kill per container, the hook's.
func withKills(first, rest []KillAction) []KillAction {
	if len(first) == 0 {
		return rest
	}
	for _, k := range rest {
		if !slices.ContainsFunc(first, func(f KillAction) bool { return f.ID == k.ID }) {
			first = append(first, k)
		}
	}
	return first
}

// cancelPostStart abandons the pod's hooks: it is being torn down.
func cancelPostStart(ps *PodSync) {
	for id, run := range ps.postStart {
		run.cancel()
		delete(ps.postStart, id)
	}
}

// postStartView is rt as the status and the prober see it: a container
// whose postStart hook has not returned is not running yet, but created.
func postStartView(rt *pleg.Pod, runs map[string]*postStartRun) *pleg.Pod {
	if len(runs) == 0 || rt == nil {
		return rt
	}
	view := *rt
	view.Containers = make([]*pleg.Container, len(rt.Containers))
	for i, c := range rt.Containers {
		if _, ok := runs[c.ID]; ok && c.State == pleg.ContainerRunning {
			created := *c
			created.State = pleg.ContainerCreated
			c = &created
		}
		view.Containers[i] = c
	}
	return &view
}

// postStartProbes is a pod's probe state while postStart hooks run, for
// the plan: a container whose hook has not returned has not started, so
// the init container after a sidecar waits for it, and is neither ready
// nor unhealthy.
type postStartProbes struct {
	probes  ProbeState // nil: no probes
	pending map[string]bool
}

func (p postStartProbes) Started(name string) bool {
	return !p.pending[name] && probeStarted(p.probes, name)
}

func (p postStartProbes) Ready(name string) bool {
	return !p.pending[name] && probeReady(p.probes, name)
}

func (p postStartProbes) Unhealthy(name string) *ProbeKill {
	if p.pending[name] {
		return nil
	}
	return probeUnhealthy(p.probes, name)
}

// withPostStart is probes with the pod's pending hooks: probes itself when
// none is pending, so a pod without hooks keeps a nil state.
func withPostStart(probes ProbeState, runs map[string]*postStartRun) ProbeState {
	if len(runs) == 0 {
		return probes
	}
	pending := make(map[string]bool, len(runs))
	for _, run := range runs {
		pending[run.name] = true
	}
	return postStartProbes{probes: probes, pending: pending}
}
