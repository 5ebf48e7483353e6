package fake

import (
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

func TestStats(t *testing.T) {
	r := newRig(t, Options{})
	sb := r.runSandbox(t, sandboxConfig("pod", map[string]string{"app": "x"}))
	run := r.createContainer(t, sb, containerConfig("run", map[string]string{"k": "run"}))
	r.startContainer(t, run)
	r.createContainer(t, sb, containerConfig("idle", nil)) // never started: no stats
	r.runSandbox(t, sandboxConfig("other", nil))

	containerStats := func(f *runtimeapi.ContainerStatsFilter) []*runtimeapi.ContainerStats {
		t.Helper()
		resp, err := r.rt.ListContainerStats(r.ctx, &runtimeapi.ListContainerStatsRequest{Filter: f})
		if err != nil {
			t.Fatal(err)
		}
		return resp.Stats
	}
	first := containerStats(nil)
	if len(first) != 1 || first[0].Attributes.Id != run || first[0].Attributes.Metadata.Name != "run" {
		t.Fatalf("stats of running containers: %v", first)
	}
	if first[0].Memory.WorkingSetBytes.GetValue() == 0 || first[0].Cpu.UsageNanoCores.GetValue() == 0 {
		t.Fatalf("no believable usage: %v", first[0])
	}
	time.Sleep(20 * time.Millisecond)
	second := containerStats(&runtimeapi.ContainerStatsFilter{PodSandboxId: sb, LabelSelector: map[string]string{"k": "run"}})
	if len(second) != 1 || second[0].Cpu.UsageCoreNanoSeconds.Value <= first[0].Cpu.UsageCoreNanoSeconds.Value ||
		second[0].Cpu.Timestamp <= first[0].Cpu.Timestamp {
		t.Fatalf("cpu did not grow: %v then %v", first[0].Cpu, second)
	}
	if got := containerStats(&runtimeapi.ContainerStatsFilter{Id: run, PodSandboxId: "other"}); len(got) != 0 {
		t.Fatalf("id filter ignored the sandbox filter: %v", got)
	}

	resp, err := r.rt.ListPodSandboxStats(r.ctx, &runtimeapi.ListPodSandboxStatsRequest{
		Filter: &runtimeapi.PodSandboxStatsFilter{LabelSelector: map[string]string{"app": "x"}},
	})
	if err != nil || len(resp.Stats) != 1 {
		t.Fatalf("sandbox stats: %v %v", resp, err)
	}
	ps := resp.Stats[0]
	if ps.Attributes.Id != sb || len(ps.Linux.Containers) != 1 ||
		ps.Linux.Memory.WorkingSetBytes.Value <= ps.Linux.Containers[0].Memory.WorkingSetBytes.Value ||
		ps.Linux.Cpu.UsageCoreNanoSeconds.Value == 0 || ps.Linux.Process.ProcessCount.Value != 2 {
		t.Fatalf("sandbox stats: %v", ps)
	}

	if err := r.srv.ExitContainer(run, 0); err != nil {
		t.Fatal(err)
	}
	if got := containerStats(nil); len(got) != 0 {
		t.Fatalf("exited container still has stats: %v", got)
	}
}

func TestSingleStats(t *testing.T) {
	r := newRig(t, Options{})
	sb := r.runSandbox(t, sandboxConfig("pod", nil))
	run := r.createContainer(t, sb, containerConfig("run", nil))
	r.startContainer(t, run)
	idle := r.createContainer(t, sb, containerConfig("idle", nil))

	cs, err := r.rt.ContainerStats(r.ctx, &runtimeapi.ContainerStatsRequest{ContainerId: run})
	if err != nil || cs.Stats.Attributes.Id != run || cs.Stats.Cpu.GetUsageNanoCores().GetValue() == 0 ||
		cs.Stats.Memory.GetWorkingSetBytes().GetValue() == 0 || cs.Stats.WritableLayer.GetFsId().GetMountpoint() != "/" {
		t.Fatalf("stats of a running container: %v %v", cs, err)
	}
	cs, err = r.rt.ContainerStats(r.ctx, &runtimeapi.ContainerStatsRequest{ContainerId: idle})
	if err != nil || cs.Stats.Attributes.Metadata.Name != "idle" || cs.Stats.Cpu != nil {
		t.Fatalf("stats of a created container: %v %v", cs, err)
	}
	_, err = r.rt.ContainerStats(r.ctx, &runtimeapi.ContainerStatsRequest{ContainerId: "nope"})
	wantCode(t, err, codes.NotFound)

	ps, err := r.rt.PodSandboxStats(r.ctx, &runtimeapi.PodSandboxStatsRequest{PodSandboxId: sb})
	if err != nil || ps.Stats.Attributes.Id != sb || len(ps.Stats.Linux.Containers) != 1 || ps.Stats.Linux.Network.DefaultInterface == nil {
		t.Fatalf("sandbox stats: %v %v", ps, err)
	}
	_, err = r.rt.PodSandboxStats(r.ctx, &runtimeapi.PodSandboxStatsRequest{PodSandboxId: "nope"})
	wantCode(t, err, codes.NotFound)

	md, err := r.rt.ListMetricDescriptors(r.ctx, &runtimeapi.ListMetricDescriptorsRequest{})
	if err != nil || len(md.Descriptors) != 0 {
		t.Fatalf("metric descriptors: %v %v", md, err)
	}
	pm, err := r.rt.ListPodSandboxMetrics(r.ctx, &runtimeapi.ListPodSandboxMetricsRequest{})
	if err != nil || len(pm.PodMetrics) != 0 {
		t.Fatalf("sandbox metrics: %v %v", pm, err)
	}
}

// TestFsMountpoint checks that every filesystem the fake reports is the
// configured directory, which a kubelet resolves to a real device.
func TestFsMountpoint(t *testing.T) {
	dir := t.TempDir()
	r := newRig(t, Options{FsMountpoint: dir})
	sb := r.runSandbox(t, sandboxConfig("pod", nil))
	r.startContainer(t, r.createContainer(t, sb, containerConfig("app", nil)))
	fs, err := r.img.ImageFsInfo(r.ctx, &runtimeapi.ImageFsInfoRequest{})
	if err != nil {
		t.Fatal(err)
	}
	got := []string{fs.ImageFilesystems[0].FsId.Mountpoint, fs.ContainerFilesystems[0].FsId.Mountpoint}
	ls, err := r.rt.ListContainerStats(r.ctx, &runtimeapi.ListContainerStatsRequest{})
	if err != nil || len(ls.Stats) != 1 {
		t.Fatalf("stats: %v %v", ls, err)
	}
	got = append(got, ls.Stats[0].WritableLayer.FsId.Mountpoint)
	for _, m := range got {
		if m != dir {
			t.Fatalf("mountpoints %v, want all %s", got, dir)
		}
	}
}
