package fake

import (
	"testing"
	"time"

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
