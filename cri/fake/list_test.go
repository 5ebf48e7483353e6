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

// TestListByPodUID checks the lists a kubelet makes for one pod: the
// pod-UID label, alone or with other labels and filters, finds exactly the
// pod's records, before and after they change.
func TestListByPodUID(t *testing.T) {
	r := newRig(t, Options{})
	pod := func(uid string, attempt uint32) string {
		cfg := sandboxConfig("pod-"+uid, map[string]string{podUIDLabel: uid, "app": "web"})
		cfg.Metadata.Attempt = attempt
		return r.runSandbox(t, cfg)
	}
	sbA1, sbA2, sbB := pod("a", 1), pod("a", 2), pod("b", 1)
	r.runSandbox(t, sandboxConfig("unlabelled", map[string]string{"app": "web"}))
	cA := r.createContainer(t, sbA2, containerConfig("app", map[string]string{podUIDLabel: "a"}))
	cA2 := r.createContainer(t, sbA2, containerConfig("side", map[string]string{podUIDLabel: "a", "role": "side"}))
	cB := r.createContainer(t, sbB, containerConfig("app", map[string]string{podUIDLabel: "b"}))
	r.startContainer(t, cA)

	sandboxes := func(sel map[string]string, state *runtimeapi.PodSandboxStateValue, want ...string) {
		t.Helper()
		resp, err := r.rt.ListPodSandbox(r.ctx, &runtimeapi.ListPodSandboxRequest{Filter: &runtimeapi.PodSandboxFilter{LabelSelector: sel, State: state}})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, it := range resp.Items {
			got = append(got, it.Id)
		}
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Fatalf("sandboxes %v: got %v, want %v", sel, got, want)
		}
	}
	containers := func(sel map[string]string, want ...string) {
		t.Helper()
		resp, err := r.rt.ListContainers(r.ctx, &runtimeapi.ListContainersRequest{Filter: &runtimeapi.ContainerFilter{LabelSelector: sel}})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, it := range resp.Containers {
			got = append(got, it.Id)
		}
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Fatalf("containers %v: got %v, want %v", sel, got, want)
		}
	}
	sandboxes(map[string]string{podUIDLabel: "a"}, nil, sbA1, sbA2)
	sandboxes(map[string]string{podUIDLabel: "a", "app": "web"}, nil, sbA1, sbA2)
	sandboxes(map[string]string{podUIDLabel: "a", "app": "db"}, nil)
	sandboxes(map[string]string{podUIDLabel: "c"}, nil)
	containers(map[string]string{podUIDLabel: "a"}, cA, cA2)
	containers(map[string]string{podUIDLabel: "a", "role": "side"}, cA2)
	containers(map[string]string{podUIDLabel: "b"}, cB)

	if _, err := r.rt.StopPodSandbox(r.ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: sbA1}); err != nil {
		t.Fatal(err)
	}
	ready := &runtimeapi.PodSandboxStateValue{State: runtimeapi.PodSandboxState_SANDBOX_READY}
	sandboxes(map[string]string{podUIDLabel: "a"}, ready, sbA2)
	if _, err := r.rt.RemoveContainer(r.ctx, &runtimeapi.RemoveContainerRequest{ContainerId: cA2}); err != nil {
		t.Fatal(err)
	}
	containers(map[string]string{podUIDLabel: "a"}, cA)
	if _, err := r.rt.RemovePodSandbox(r.ctx, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: sbA2}); err != nil {
		t.Fatal(err)
	}
	sandboxes(map[string]string{podUIDLabel: "a"}, nil, sbA1)
	containers(map[string]string{podUIDLabel: "a"})

	st, err := r.rt.ListPodSandboxStats(r.ctx, &runtimeapi.ListPodSandboxStatsRequest{
		Filter: &runtimeapi.PodSandboxStatsFilter{LabelSelector: map[string]string{podUIDLabel: "b"}},
	})
	if err != nil || len(st.Stats) != 1 || st.Stats[0].Attributes.Id != sbB {
		t.Fatalf("sandbox stats by pod UID: %v %v", st, err)
	}
}
