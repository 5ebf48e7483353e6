package main

import (
	"fmt"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// The invariants every kill -9 case checks once podline is back, from the
// runtime's side (ListPodSandbox, ListContainers over the fake CRI's
// socket) and the agent's (/pods). A violation names the invariant, so a
// report can say which one held back the convergence.
const (
	invDuplicate = "duplicate" // a pod with two ready sandboxes, or two running containers of one name
	invLost      = "lost"      // a manifest's pod not Running in /pods, or without its ready sandbox and running container
	invOrphan    = "orphan"    // a sandbox or container, in any state, of a pod with no manifest
	invRestart   = "restart"   // a container restarted although the runtime never ended one
	invListed    = "listed"    // /pods lists a pod that has no manifest
)

// invariants are the names above, in the order a report lists them.
var invariants = []string{invDuplicate, invLost, invOrphan, invRestart, invListed}

// relSnapshot is one look at both sides.
type relSnapshot struct {
	sandboxes  []*runtimeapi.PodSandbox
	containers []*runtimeapi.Container
	pods       []v1.Pod
}

// violation is one broken invariant about one pod.
type violation struct {
	invariant string
	pod       string
	detail    string
}

func (v violation) String() string { return v.invariant + ": " + v.pod + ": " + v.detail }

// leftovers are what a recovery may leave without breaking an invariant:
// dead sandboxes and exited containers of pods that still have their
// manifest, which a garbage collector removes in its own time.
type leftovers struct {
	DeadSandboxes  int `json:"dead_sandboxes"`
	ExitedContains int `json:"exited_containers"`
}

// checkInvariants returns every violation in s when want are the pods (by the name
// the agent shows, <name>-<node>) whose manifests exist; with want empty
// nothing at all may be left. A running container whose attempt is above
// 0 was created again by the agent: the fake's containers never end by
// themselves, so the runtime restarted nothing and the restart count must
// stay 0 on both sides.
func checkInvariants(s relSnapshot, want map[string]bool) ([]violation, leftovers) {
	var out []violation
	var left leftovers
	add := func(inv, pod, format string, args ...any) {
		out = append(out, violation{inv, pod, fmt.Sprintf(format, args...)})
	}
	podOf := map[string]string{} // sandbox id → pod name
	ready := map[string][]string{}
	for _, sb := range s.sandboxes {
		pod := sb.GetMetadata().GetName()
		podOf[sb.Id] = pod
		switch {
		case !want[pod]:
			add(invOrphan, pod, "sandbox %s (%s)", shortID(sb.Id), sb.State)
		case sb.State == runtimeapi.PodSandboxState_SANDBOX_READY:
			ready[pod] = append(ready[pod], shortID(sb.Id))
		default:
			left.DeadSandboxes++
		}
	}
	running := map[string][]string{} // "<pod>/<container>" → ids
	for _, c := range s.containers {
		pod, ok := podOf[c.PodSandboxId]
		name := c.GetMetadata().GetName()
		switch {
		case !ok || !want[pod]:
			add(invOrphan, pod, "container %s %s of sandbox %s (%s)", name, shortID(c.Id), shortID(c.PodSandboxId), c.State)
		case c.State == runtimeapi.ContainerState_CONTAINER_RUNNING:
			running[pod+"/"+name] = append(running[pod+"/"+name], shortID(c.Id))
			if a := c.GetMetadata().GetAttempt(); a > 0 {
				add(invRestart, pod, "container %s %s runs as attempt %d", name, shortID(c.Id), a)
			}
		default:
			left.ExitedContains++
		}
	}
	for pod, ids := range ready {
		if len(ids) > 1 {
			add(invDuplicate, pod, "%d ready sandboxes %s", len(ids), strings.Join(ids, ","))
		}
	}
	for key, ids := range running {
		if len(ids) > 1 {
			pod, name, _ := strings.Cut(key, "/")
			add(invDuplicate, pod, "%d running %s containers %s", len(ids), name, strings.Join(ids, ","))
		}
	}
	listed := map[string]*v1.Pod{}
	for i := range s.pods {
		p := &s.pods[i]
		listed[p.Name] = p
		if !want[p.Name] {
			add(invListed, p.Name, "phase %q", p.Status.Phase)
		}
		for _, cs := range p.Status.ContainerStatuses {
			if cs.RestartCount > 0 {
				add(invRestart, p.Name, "/pods: container %s restartCount %d", cs.Name, cs.RestartCount)
			}
		}
	}
	for pod := range want {
		p := listed[pod]
		switch {
		case p == nil:
			add(invLost, pod, "not in /pods")
		case !podRunning(p):
			add(invLost, pod, "/pods: phase %q, not every container running", p.Status.Phase)
		case len(ready[pod]) == 0:
			add(invLost, pod, "Running in /pods but no ready sandbox in the runtime")
		}
		if p != nil {
			for _, cs := range p.Spec.Containers {
				if len(running[pod+"/"+cs.Name]) == 0 {
					add(invLost, pod, "no running %s container in the runtime", cs.Name)
				}
			}
		}
	}
	slices.SortFunc(out, func(a, b violation) int { return strings.Compare(a.String(), b.String()) })
	return out, left
}

// podRunning is observe.Pod.Running on a full pod: the phase and every
// container running with an id.
func podRunning(p *v1.Pod) bool {
	if p.Status.Phase != v1.PodRunning || len(p.Status.ContainerStatuses) == 0 {
		return false
	}
	for _, cs := range p.Status.ContainerStatuses {
		if cs.State.Running == nil || cs.ContainerID == "" {
			return false
		}
	}
	return true
}

// byInvariant counts vs per invariant, every invariant present.
func byInvariant(vs []violation) map[string]int {
	out := map[string]int{}
	for _, inv := range invariants {
		out[inv] = 0
	}
	for _, v := range vs {
		out[v.invariant]++
	}
	return out
}

func shortID(id string) string { return id[:min(len(id), 12)] }
