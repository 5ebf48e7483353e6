package podspec

import (
	"testing"

	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"
	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

func TestLinuxResources(t *testing.T) {
	node := &Node{MemoryBytes: 8 << 30}
	f := func(name string, pods []v1.ResourceRequirements, want *runtimeapi.LinuxContainerResources) {
		t.Helper()
		pod := unitPod(func(p *v1.Pod) {
			p.Spec.Containers = nil
			for _, r := range pods {
				p.Spec.Containers = append(p.Spec.Containers, v1.Container{Name: "c", Resources: r})
			}
		})
		got := linuxResources(pod, &pod.Spec.Containers[0], node)
		if !proto.Equal(got, want) {
			t.Errorf("%s:\n got %s\nwant %s", name, prototext.Format(got), prototext.Format(want))
		}
	}
	r := testResources
	f("best effort", []v1.ResourceRequirements{{}},
		&runtimeapi.LinuxContainerResources{CpuShares: 2, OomScoreAdj: 1000})
	f("guaranteed", []v1.ResourceRequirements{r("500m", "1Gi", "500m", "1Gi")},
		&runtimeapi.LinuxContainerResources{CpuShares: 512, CpuQuota: 50000, CpuPeriod: 100000,
			MemoryLimitInBytes: 1 << 30, OomScoreAdj: -997})
	f("guaranteed by limits alone", []v1.ResourceRequirements{r("", "", "2", "2Gi")},
		&runtimeapi.LinuxContainerResources{CpuShares: 2048, CpuQuota: 200000, CpuPeriod: 100000,
			MemoryLimitInBytes: 2 << 30, OomScoreAdj: -997})
	f("burstable, requests only", []v1.ResourceRequirements{r("250m", "2Gi", "", "")},
		&runtimeapi.LinuxContainerResources{CpuShares: 256, OomScoreAdj: 750})
	f("burstable, limit above request", []v1.ResourceRequirements{r("100m", "1Gi", "1", "4Gi")},
		&runtimeapi.LinuxContainerResources{CpuShares: 102, CpuQuota: 100000, CpuPeriod: 100000,
			MemoryLimitInBytes: 4 << 30, OomScoreAdj: 875})
	f("burstable memory-only container in a pod with cpu elsewhere",
		[]v1.ResourceRequirements{r("", "", "", "1Gi"), r("1", "", "", "")},
		&runtimeapi.LinuxContainerResources{CpuShares: 2, MemoryLimitInBytes: 1 << 30, OomScoreAdj: 875})
}

func TestOOMScoreAdj(t *testing.T) {
	f := func(name string, nodeMem int64, res v1.ResourceRequirements, want int64) {
		t.Helper()
		pod := unitPod(func(p *v1.Pod) { p.Spec.Containers[0].Resources = res })
		if got := oomScoreAdj(pod, &pod.Spec.Containers[0], &Node{MemoryBytes: nodeMem}); got != want {
			t.Errorf("%s: %d, want %d", name, got, want)
		}
	}
	const mem = 10 << 30
	r := testResources
	f("best effort", mem, r("", "", "", ""), 1000)
	f("guaranteed", mem, r("1", "1Gi", "1", "1Gi"), -997)
	f("burstable without memory request", mem, r("100m", "", "", ""), 999)
	f("burstable, 10% of the node", mem, r("", "1Gi", "", ""), 900)
	f("burstable, half the node", mem, r("", "5Gi", "", ""), 500)
	f("burstable, a tiny request still ranks below best effort", mem, r("", "1Ki", "", ""), 999)
	f("burstable, whole node: kept above guaranteed", mem, r("", "10Gi", "", ""), 3)
	f("burstable, more than the node", mem, r("", "20Gi", "", ""), 3)
	f("burstable, memory limit when no request", mem, r("100m", "", "", "2Gi"), 800)
	f("burstable, node memory unknown", 0, r("", "1Gi", "", ""), 999)
}
