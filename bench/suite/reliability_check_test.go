package main

import (
	"slices"
	"testing"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

func relSandbox(id, pod string, ready bool) *runtimeapi.PodSandbox {
	st := runtimeapi.PodSandboxState_SANDBOX_NOTREADY
	if ready {
		st = runtimeapi.PodSandboxState_SANDBOX_READY
	}
	return &runtimeapi.PodSandbox{Id: id, State: st, Metadata: &runtimeapi.PodSandboxMetadata{Name: pod}}
}

func relContainer(id, sandbox string, attempt uint32, running bool) *runtimeapi.Container {
	st := runtimeapi.ContainerState_CONTAINER_EXITED
	if running {
		st = runtimeapi.ContainerState_CONTAINER_RUNNING
	}
	return &runtimeapi.Container{Id: id, PodSandboxId: sandbox, State: st, Metadata: &runtimeapi.ContainerMetadata{Name: "app", Attempt: attempt}}
}

func relPod(name string, running bool, restarts int32) v1.Pod {
	p := v1.Pod{}
	p.Name = name
	p.Spec.Containers = []v1.Container{{Name: "app"}}
	p.Status.Phase = v1.PodPending
	cs := v1.ContainerStatus{Name: "app", RestartCount: restarts}
	if running {
		p.Status.Phase = v1.PodRunning
		cs.ContainerID = "fake://c"
		cs.State.Running = &v1.ContainerStateRunning{}
	}
	p.Status.ContainerStatuses = []v1.ContainerStatus{cs}
	return p
}

func TestCheckInvariants(t *testing.T) {
	want := map[string]bool{"a": true, "b": true}
	f := func(s relSnapshot, want map[string]bool, wantInv []string, wantLeft leftovers) {
		t.Helper()
		vs, left := checkInvariants(s, want)
		var got []string
		for _, v := range vs {
			got = append(got, v.invariant)
		}
		slices.Sort(got)
		slices.Sort(wantInv)
		if !slices.Equal(got, wantInv) || left != wantLeft {
			t.Fatalf("violations %v leftovers %+v, want %v %+v", vs, left, wantInv, wantLeft)
		}
	}
	healthy := relSnapshot{
		sandboxes:  []*runtimeapi.PodSandbox{relSandbox("sa", "a", true), relSandbox("sb", "b", true)},
		containers: []*runtimeapi.Container{relContainer("ca", "sa", 0, true), relContainer("cb", "sb", 0, true)},
		pods:       []v1.Pod{relPod("a", true, 0), relPod("b", true, 0)},
	}
	f(healthy, want, nil, leftovers{})

	// A dead sandbox and an exited container of a wanted pod are leftovers.
	s := healthy
	s.sandboxes = append(slices.Clone(s.sandboxes), relSandbox("old", "a", false))
	s.containers = append(slices.Clone(s.containers), relContainer("cold", "old", 0, false))
	f(s, want, nil, leftovers{DeadSandboxes: 1, ExitedContains: 1})

	// Two ready sandboxes and two running containers of one pod.
	s = healthy
	s.sandboxes = append(slices.Clone(s.sandboxes), relSandbox("sa2", "a", true))
	s.containers = append(slices.Clone(s.containers), relContainer("ca2", "sa2", 0, true))
	f(s, want, []string{invDuplicate, invDuplicate}, leftovers{})

	// A pod Pending in /pods, and one whose container the runtime lacks.
	s = healthy
	s.pods = []v1.Pod{relPod("a", false, 0), relPod("b", true, 0)}
	s.containers = s.containers[:1]
	f(s, want, []string{invLost, invLost}, leftovers{})

	// A pod missing from /pods altogether.
	s = healthy
	s.pods = s.pods[:1]
	f(s, want, []string{invLost}, leftovers{})

	// Restarted: attempt 1 in the runtime, restartCount 1 in /pods.
	s = healthy
	s.containers = []*runtimeapi.Container{relContainer("ca", "sa", 1, true), relContainer("cb", "sb", 0, true)}
	s.pods = []v1.Pod{relPod("a", true, 0), relPod("b", true, 1)}
	f(s, want, []string{invRestart, invRestart}, leftovers{})

	// Orphans: a sandbox of a pod without manifest, a container of a
	// sandbox gone from the runtime, and /pods listing a removed pod.
	s = healthy
	s.sandboxes = append(slices.Clone(s.sandboxes), relSandbox("sx", "x", false))
	s.containers = append(slices.Clone(s.containers), relContainer("cy", "gone", 0, true))
	s.pods = append(slices.Clone(s.pods), relPod("x", true, 0))
	f(s, want, []string{invOrphan, invOrphan, invListed}, leftovers{})

	// After a teardown nothing may be left, dead or alive.
	f(relSnapshot{}, nil, nil, leftovers{})
	f(healthy, nil, []string{invOrphan, invOrphan, invOrphan, invOrphan, invListed, invListed}, leftovers{})
}
