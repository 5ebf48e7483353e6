package fake

import (
	"slices"
	"testing"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

func TestListFilters(t *testing.T) {
	r := newRig(t, Options{})
	sbA := r.runSandbox(t, sandboxConfig("a", map[string]string{"app": "web", "tier": "front"}))
	sbB := r.runSandbox(t, sandboxConfig("b", map[string]string{"app": "web"}))
	sbC := r.runSandbox(t, sandboxConfig("c", map[string]string{"app": "db"}))
	if _, err := r.rt.StopPodSandbox(r.ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: sbC}); err != nil {
		t.Fatal(err)
	}
	a1 := r.createContainer(t, sbA, containerConfig("one", map[string]string{"role": "main"}))
	a2 := r.createContainer(t, sbA, containerConfig("two", map[string]string{"role": "side"}))
	b1 := r.createContainer(t, sbB, containerConfig("one", map[string]string{"role": "main"}))
	r.startContainer(t, a1)
	r.startContainer(t, b1)

	sandboxes := func(name string, f *runtimeapi.PodSandboxFilter, want ...string) {
		t.Helper()
		resp, err := r.rt.ListPodSandbox(r.ctx, &runtimeapi.ListPodSandboxRequest{Filter: f})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var got []string
		for _, it := range resp.Items {
			got = append(got, it.Id)
		}
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Fatalf("%s: got %v, want %v", name, got, want)
		}
	}
	ready := &runtimeapi.PodSandboxStateValue{State: runtimeapi.PodSandboxState_SANDBOX_READY}
	sandboxes("all", nil, sbA, sbB, sbC)
	sandboxes("by id", &runtimeapi.PodSandboxFilter{Id: sbB}, sbB)
	sandboxes("unknown id", &runtimeapi.PodSandboxFilter{Id: "nope"})
	sandboxes("ready", &runtimeapi.PodSandboxFilter{State: ready}, sbA, sbB)
	sandboxes("labels", &runtimeapi.PodSandboxFilter{LabelSelector: map[string]string{"app": "web"}}, sbA, sbB)
	sandboxes("two labels", &runtimeapi.PodSandboxFilter{LabelSelector: map[string]string{"app": "web", "tier": "front"}}, sbA)
	sandboxes("id and wrong state", &runtimeapi.PodSandboxFilter{Id: sbC, State: ready})

	containers := func(name string, f *runtimeapi.ContainerFilter, want ...string) {
		t.Helper()
		resp, err := r.rt.ListContainers(r.ctx, &runtimeapi.ListContainersRequest{Filter: f})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var got []string
		for _, c := range resp.Containers {
			got = append(got, c.Id)
		}
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Fatalf("%s: got %v, want %v", name, got, want)
		}
	}
	running := &runtimeapi.ContainerStateValue{State: runtimeapi.ContainerState_CONTAINER_RUNNING}
	containers("all", nil, a1, a2, b1)
	containers("by id", &runtimeapi.ContainerFilter{Id: a2}, a2)
	containers("by sandbox", &runtimeapi.ContainerFilter{PodSandboxId: sbA}, a1, a2)
	containers("id in other sandbox", &runtimeapi.ContainerFilter{Id: a1, PodSandboxId: sbB})
	containers("running", &runtimeapi.ContainerFilter{State: running}, a1, b1)
	containers("labels", &runtimeapi.ContainerFilter{LabelSelector: map[string]string{"role": "main"}}, a1, b1)
	containers("sandbox+state+labels", &runtimeapi.ContainerFilter{
		PodSandboxId: sbA, State: running, LabelSelector: map[string]string{"role": "main"},
	}, a1)
	containers("empty sandbox", &runtimeapi.ContainerFilter{PodSandboxId: sbC})

	resp, err := r.rt.ListContainers(r.ctx, &runtimeapi.ListContainersRequest{Filter: &runtimeapi.ContainerFilter{Id: b1}})
	if err != nil || len(resp.Containers) != 1 {
		t.Fatalf("list b1: %v %v", resp, err)
	}
	if c := resp.Containers[0]; c.PodSandboxId != sbB || c.Metadata.Name != "one" || c.Labels["role"] != "main" || c.State != runtimeapi.ContainerState_CONTAINER_RUNNING {
		t.Fatalf("list item: %v", c)
	}
}
