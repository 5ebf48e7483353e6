package stages

import (
	"fmt"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/podline/podline/cgroupfs"
	"github.com/podline/podline/pleg"
	"github.com/podline/podline/podspec"
)

// StatusInput is everything a pod's status is computed from.
type StatusInput struct {
	Pod         *v1.Pod
	Runtime     *pleg.Pod
	Sync        *PodSync
	Node        *Node
	RuntimeName string
	Now         time.Time
	// Prev is the status last published, nil at first.
	Prev *v1.PodStatus
	// Messages are the termination messages of exited container
	// instances by container ID, as their files gave them.
	Messages map[string]string
	// Probes is what the pod's probes found; nil: a running container
	// is started and ready.
	Probes ProbeState
}

// PodStatus computes a pod's API status. It is a pure function of its
// input: no runtime call, no clock but in.Now.
func PodStatus(in StatusInput) v1.PodStatus {
	st := podStatus(in)
	observed(&st, in.Pod.Generation)
	return st
}

// observed stamps the generation of the spec a status was computed from
// on the status and on the conditions it sets, as the kubelet does since
// pods have a generation (Kubernetes 1.35): a client that changed the spec
// (an image, a deadline) can tell when the node has seen the change. A pod
// without a generation (a static pod) leaves them unset.
func observed(st *v1.PodStatus, gen int64) {
	st.ObservedGeneration = gen
	for i := range st.Conditions {
		st.Conditions[i].ObservedGeneration = gen
	}
}

func podStatus(in StatusInput) v1.PodStatus {
	pod, rt, prev := in.Pod, in.Runtime, in.Prev
	st := v1.PodStatus{QOSClass: cgroupfs.QOSClass(pod)}
	for _, ip := range in.Node.IPs {
		st.HostIPs = append(st.HostIPs, v1.HostIP{IP: ip})
	}
	st.HostIP = in.Node.HostIP()
	st.StartTime = startTime(in)

	if rej := in.Sync.Rejection; rej != nil {
		st.Phase, st.Reason, st.Message = v1.PodFailed, rej.Reason, rej.Message
		st.Conditions = conditions(prev, in.Now, cond(v1.PodScheduled, true, "", ""))
		return st
	}

	sb := rt.CurrentSandbox()
	st.PodIPs = podIPs(pod, sb, in.Node, prev)
	if len(st.PodIPs) > 0 {
		st.PodIP = st.PodIPs[0].IP
	}

	// Sidecars count toward the pod's readiness, before the app
	// containers, as the kubelet lists them.
	initDone := true
	var incomplete, unready []string
	for i := range pod.Spec.InitContainers {
		spec := &pod.Spec.InitContainers[i]
		if isSidecar(spec) {
			cs := containerStatus(spec, rt, in.Probes, in.Sync.Waiting, "PodInitializing", in.RuntimeName, in.Messages)
			if cs.Started == nil || !*cs.Started {
				initDone = false
				incomplete = append(incomplete, spec.Name)
			}
			if !cs.Ready {
				unready = append(unready, spec.Name)
			}
			st.InitContainerStatuses = append(st.InitContainerStatuses, cs)
			continue
		}
		// An ordinary init container has no probes; it is ready once it
		// completed, as the kubelet reports it.
		cs := containerStatus(spec, rt, nil, in.Sync.Waiting, "PodInitializing", in.RuntimeName, in.Messages)
		cs.Ready = cs.State.Terminated != nil && cs.State.Terminated.ExitCode == 0
		if !cs.Ready {
			initDone = false
			incomplete = append(incomplete, spec.Name)
		}
		st.InitContainerStatuses = append(st.InitContainerStatuses, cs)
	}
	if anyAppStarted(pod, rt) {
		// Initialized once: a sidecar restarting later does not undo it.
		initDone, incomplete = true, nil
	}
	appWait := "ContainerCreating"
	if !initDone {
		appWait = "PodInitializing"
	}
	for i := range pod.Spec.Containers {
		spec := &pod.Spec.Containers[i]
		cs := containerStatus(spec, rt, in.Probes, in.Sync.Waiting, appWait, in.RuntimeName, in.Messages)
		if !cs.Ready {
			unready = append(unready, spec.Name)
		}
		st.ContainerStatuses = append(st.ContainerStatuses, cs)
	}

	limitMessages(&st, podspec.MessageBudget(pod))

	st.Phase = podPhase(pod, st.InitContainerStatuses, st.ContainerStatuses, initDone)
	if deadlineEnded(pod, rt, st.StartTime.Time, in.Now, st.Phase) {
		st.Phase, st.Reason, st.Message = v1.PodFailed, ReasonDeadlineExceeded, MessageDeadlineExceeded
	}
	if prev != nil && (prev.Phase == v1.PodSucceeded || prev.Phase == v1.PodFailed) {
		// A finished pod never comes back, nor changes why it finished.
		st.Phase, st.Reason, st.Message = prev.Phase, prev.Reason, prev.Message
	}

	sandboxReady := sb != nil && sb.State == pleg.SandboxReady && (pod.Spec.HostNetwork || len(sb.IPs) > 0)
	initCond := cond(v1.PodInitialized, initDone, "ContainersNotInitialized", listMsg("incomplete", incomplete))
	readyReason := "ContainersNotReady"
	if st.Phase == v1.PodSucceeded || st.Phase == v1.PodFailed {
		readyReason, unready = "PodCompleted", nil
	}
	ready := len(unready) == 0 && st.Phase == v1.PodRunning
	st.Conditions = conditions(prev, in.Now,
		sandboxCond(sandboxReady, in.Sync.StartBlocked),
		initCond,
		cond(v1.PodReady, ready, readyReason, listMsg("unready", unready)),
		cond(v1.ContainersReady, ready, readyReason, listMsg("unready", unready)),
		cond(v1.PodScheduled, true, "", ""),
	)
	return st
}

// anyAppStarted reports whether an app container exists in the current
// sandbox: then the init phase is over.
func anyAppStarted(pod *v1.Pod, rt *pleg.Pod) bool {
	sb := rt.CurrentSandbox()
	return sb != nil && appStartedIn(pod, rt, sb.ID)
}

func startTime(in StatusInput) *metav1.Time {
	if in.Prev != nil && in.Prev.StartTime != nil {
		return in.Prev.StartTime
	}
	t := in.Sync.Started
	if t.IsZero() {
		t = PodStart(in.Pod, in.Sync.FirstSeen, in.Runtime)
	}
	mt := metav1.NewTime(t)
	return &mt
}

func podIPs(pod *v1.Pod, sb *pleg.Sandbox, node *Node, prev *v1.PodStatus) []v1.PodIP {
	var out []v1.PodIP
	switch {
	case pod.Spec.HostNetwork:
		for _, ip := range node.IPs {
			out = append(out, v1.PodIP{IP: ip})
		}
	case sb != nil && len(sb.IPs) > 0:
		for _, ip := range sb.IPs {
			out = append(out, v1.PodIP{IP: ip})
		}
	case prev != nil:
		// A stopped sandbox has no address any more; the pod keeps the
		// one it had.
		out = prev.PodIPs
	}
	return out
}

func listMsg(what string, names []string) string {
	if len(names) == 0 {
		return ""
	}
	return fmt.Sprintf("containers with %s status: [%s]", what, strings.Join(names, " "))
}

// ReasonFailedCreatePodSandBox is the event's reason, and the
// PodReadyToStartContainers condition's, when the runtime could not make a
// pod's sandbox.
const ReasonFailedCreatePodSandBox = "FailedCreatePodSandBox"

// sandboxCond is PodReadyToStartContainers. The kubelet gives it no
// reason, and says why a pod is stuck before its containers (a volume that
// cannot mount on a full disk, a hung RunPodSandbox) only in events, which
// a standalone node does not keep: here the condition says it too.
func sandboxCond(ready bool, blocked Waiting) v1.PodCondition {
	return cond(v1.PodReadyToStartContainers, ready, blocked.Reason, blocked.Message)
}

func cond(t v1.PodConditionType, ok bool, reason, msg string) v1.PodCondition {
	c := v1.PodCondition{Type: t, Status: v1.ConditionTrue}
	if !ok {
		c.Status, c.Reason, c.Message = v1.ConditionFalse, reason, msg
	}
	return c
}

// conditions stamps transition times, keeping the previous time for a
// condition whose status did not change, so an unchanged pod produces an
// identical status.
func conditions(prev *v1.PodStatus, now time.Time, cs ...v1.PodCondition) []v1.PodCondition {
	for i := range cs {
		cs[i].LastTransitionTime = metav1.NewTime(now.Truncate(time.Second))
		if prev == nil {
			continue
		}
		for _, p := range prev.Conditions {
			if p.Type == cs[i].Type && p.Status == cs[i].Status {
				cs[i].LastTransitionTime = p.LastTransitionTime
			}
		}
	}
	return cs
}
