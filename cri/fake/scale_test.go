package fake

import (
	"context"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// TestScale drives the handlers directly with 10,000 pods to show that no
// operation grows with the number of pods on the node.
func TestScale(t *testing.T) {
	const n = 10_000
	s := New(Options{})
	defer s.Stop()
	ctx := context.Background()
	ids := make([]string, n)
	for i := range n {
		sb, err := s.RunPodSandbox(ctx, &runtimeapi.RunPodSandboxRequest{Config: sandboxConfig("p"+strconv.Itoa(i), nil)})
		if err != nil {
			t.Fatal(err)
		}
		c, err := s.CreateContainer(ctx, &runtimeapi.CreateContainerRequest{PodSandboxId: sb.PodSandboxId, Config: containerConfig("c", nil)})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.StartContainer(ctx, &runtimeapi.StartContainerRequest{ContainerId: c.ContainerId}); err != nil {
			t.Fatal(err)
		}
		ids[i] = sb.PodSandboxId
	}

	// One filtered list per pod: a full scan each time would visit 10^8
	// containers and take far longer than this bound.
	start := time.Now()
	for _, id := range ids {
		resp, err := s.ListContainers(ctx, &runtimeapi.ListContainersRequest{Filter: &runtimeapi.ContainerFilter{PodSandboxId: id}})
		if err != nil || len(resp.Containers) != 1 {
			t.Fatalf("list of %s: %v %v", id, resp, err)
		}
	}
	if took := time.Since(start); took > 3*time.Second {
		t.Fatalf("%d sandbox-filtered lists took %v", n, took)
	}

	all, err := s.ListContainers(ctx, &runtimeapi.ListContainersRequest{})
	if err != nil || len(all.Containers) != n {
		t.Fatalf("full list: %d, %v", len(all.Containers), err)
	}
	for _, id := range ids {
		if _, err := s.RemovePodSandbox(ctx, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: id}); err != nil {
			t.Fatal(err)
		}
	}
	if len(s.containers) != 0 || len(s.sandboxes) != 0 || len(s.names) != 0 || len(s.ips.used) != 0 {
		t.Fatalf("left behind: %d containers, %d sandboxes, %d names, %d ips",
			len(s.containers), len(s.sandboxes), len(s.names), len(s.ips.used))
	}
}

func BenchmarkPodLifecycleOverGRPC(b *testing.B) {
	r := newRig(b, Options{})
	b.ReportAllocs()
	b.ResetTimer()
	var seq atomic.Int64
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			name := strconv.FormatInt(seq.Add(1), 10)
			sb, err := r.rt.RunPodSandbox(r.ctx, &runtimeapi.RunPodSandboxRequest{Config: sandboxConfig(name, nil)})
			if err != nil {
				b.Fatal(err)
			}
			c, err := r.rt.CreateContainer(r.ctx, &runtimeapi.CreateContainerRequest{PodSandboxId: sb.PodSandboxId, Config: containerConfig("c", nil)})
			if err != nil {
				b.Fatal(err)
			}
			if _, err := r.rt.StartContainer(r.ctx, &runtimeapi.StartContainerRequest{ContainerId: c.ContainerId}); err != nil {
				b.Fatal(err)
			}
			if _, err := r.rt.RemovePodSandbox(r.ctx, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: sb.PodSandboxId}); err != nil {
				b.Fatal(err)
			}
		}
	})
}
