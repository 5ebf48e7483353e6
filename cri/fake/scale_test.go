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
		sb, err := s.RunPodSandbox(ctx, &runtimeapi.RunPodSandboxRequest{Config: sandboxConfig("p"+strconv.Itoa(i), podLabels(i))})
		if err != nil {
			t.Fatal(err)
		}
		c, err := s.CreateContainer(ctx, &runtimeapi.CreateContainerRequest{PodSandboxId: sb.PodSandboxId, Config: containerConfig("c", podLabels(i))})
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
	// The lists a kubelet makes per pod sync filter on the pod-UID label.
	start = time.Now()
	for i := range n {
		sel := podLabels(i)
		sbs, err := s.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{Filter: &runtimeapi.PodSandboxFilter{LabelSelector: sel}})
		if err != nil || len(sbs.Items) != 1 || sbs.Items[0].Id != ids[i] {
			t.Fatalf("sandboxes of pod %d: %v %v", i, sbs, err)
		}
		cs, err := s.ListContainers(ctx, &runtimeapi.ListContainersRequest{Filter: &runtimeapi.ContainerFilter{LabelSelector: sel}})
		if err != nil || len(cs.Containers) != 1 {
			t.Fatalf("containers of pod %d: %v %v", i, cs, err)
		}
	}
	if took := time.Since(start); took > 3*time.Second {
		t.Fatalf("%d pod-UID-filtered list pairs took %v", n, took)
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
	if len(s.containers) != 0 || len(s.sandboxes) != 0 || len(s.names) != 0 || len(s.ips.used) != 0 ||
		len(s.byPod.sandboxes) != 0 || len(s.byPod.containers) != 0 {
		t.Fatalf("left behind: %d containers, %d sandboxes, %d names, %d ips, %d+%d index entries",
			len(s.containers), len(s.sandboxes), len(s.names), len(s.ips.used), len(s.byPod.sandboxes), len(s.byPod.containers))
	}
}

// podLabels are the labels a kubelet gives every sandbox and container of
// pod i.
func podLabels(i int) map[string]string {
	return map[string]string{podUIDLabel: "uid-" + strconv.Itoa(i), "io.kubernetes.pod.namespace": "default"}
}

// populate fills s with n running pods of one container each.
func populate(tb testing.TB, s *Server, n int) {
	tb.Helper()
	ctx := context.Background()
	for i := range n {
		sb, err := s.RunPodSandbox(ctx, &runtimeapi.RunPodSandboxRequest{Config: sandboxConfig("p"+strconv.Itoa(i), podLabels(i))})
		if err != nil {
			tb.Fatal(err)
		}
		c, err := s.CreateContainer(ctx, &runtimeapi.CreateContainerRequest{PodSandboxId: sb.PodSandboxId, Config: containerConfig("c", podLabels(i))})
		if err != nil {
			tb.Fatal(err)
		}
		if _, err := s.StartContainer(ctx, &runtimeapi.StartContainerRequest{ContainerId: c.ContainerId}); err != nil {
			tb.Fatal(err)
		}
	}
}

// BenchmarkRelist10k is one relist of a node with 10,000 pods, the full
// lists a PLEG makes every second, through the handlers: the time each
// holds the runtime's lock.
func BenchmarkRelist10k(b *testing.B) {
	s := New(Options{})
	defer s.Stop()
	populate(b, s, 10_000)
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := s.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{}); err != nil {
			b.Fatal(err)
		}
		if _, err := s.ListContainers(ctx, &runtimeapi.ListContainersRequest{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStats10k is one round of the stats a kubelet's eviction manager
// reads every 10 s, on a node with 10,000 pods.
func BenchmarkStats10k(b *testing.B) {
	s := New(Options{})
	defer s.Stop()
	populate(b, s, 10_000)
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := s.ListContainerStats(ctx, &runtimeapi.ListContainerStatsRequest{}); err != nil {
			b.Fatal(err)
		}
		if _, err := s.ListPodSandboxStats(ctx, &runtimeapi.ListPodSandboxStatsRequest{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPodStatusByUID10k is the pair of pod-UID-filtered lists a
// kubelet makes for each pod sync, on a node with 10,000 pods.
func BenchmarkPodStatusByUID10k(b *testing.B) {
	s := New(Options{})
	defer s.Stop()
	populate(b, s, 10_000)
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	i := 0
	for b.Loop() {
		sel := podLabels(i % 10_000)
		i++
		if _, err := s.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{Filter: &runtimeapi.PodSandboxFilter{LabelSelector: sel}}); err != nil {
			b.Fatal(err)
		}
		if _, err := s.ListContainers(ctx, &runtimeapi.ListContainersRequest{Filter: &runtimeapi.ContainerFilter{LabelSelector: sel}}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPodStartContainerdLike starts pods (sandbox, container, start)
// over gRPC with containerd's latencies from many concurrent callers, as an
// agent starting thousands of pods does; pods/s shows how close the fake
// comes to the bound the latencies set (callers / 147 ms).
func BenchmarkPodStartContainerdLike(b *testing.B) {
	r := newRig(b, Options{Latency: ContainerdLikeLatency(), DefaultLatency: ContainerdLikeDefaultLatency})
	var seq atomic.Int64
	b.SetParallelism(500) // 500 callers per GOMAXPROCS
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			i := int(seq.Add(1))
			sb, err := r.rt.RunPodSandbox(r.ctx, &runtimeapi.RunPodSandboxRequest{Config: sandboxConfig("p"+strconv.Itoa(i), podLabels(i))})
			if err != nil {
				b.Fatal(err)
			}
			c, err := r.rt.CreateContainer(r.ctx, &runtimeapi.CreateContainerRequest{PodSandboxId: sb.PodSandboxId, Config: containerConfig("c", podLabels(i))})
			if err != nil {
				b.Fatal(err)
			}
			if _, err := r.rt.StartContainer(r.ctx, &runtimeapi.StartContainerRequest{ContainerId: c.ContainerId}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.ReportMetric(float64(seq.Load())/time.Since(start).Seconds(), "pods/s")
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
