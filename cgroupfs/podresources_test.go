package cgroupfs

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func TestPodResources(t *testing.T) {
	f := func(name string, pod *v1.Pod, want string) {
		t.Helper()
		if got := PodResources(pod).String(); got != want {
			t.Errorf("%s:\n got %s\nwant %s", name, got, want)
		}
	}
	type rr = []v1.ResourceRequirements
	const mi = 1 << 20

	f("best effort", qosPod(nil, rr{{}, {}}), "shares=2")
	f("best effort with an empty init", qosPod(rr{{}}, rr{{}}), "shares=2")
	f("guaranteed", qosPod(nil, rr{qosRes("500m", "128Mi", "500m", "128Mi")}),
		"shares=512 quota=50000/100000 memory=134217728")
	f("guaranteed, requests from limits, summed", qosPod(nil, rr{qosRes("", "", "250m", "64Mi"), qosRes("", "", "1", "64Mi")}),
		"shares=1280 quota=125000/100000 memory=134217728")
	f("burstable, requests only", qosPod(nil, rr{qosRes("100m", "64Mi", "", "")}), "shares=102")
	f("burstable with limits", qosPod(nil, rr{qosRes("250m", "64Mi", "500m", "128Mi")}),
		"shares=256 quota=50000/100000 memory=134217728")
	f("burstable, memory-only limits", qosPod(nil, rr{qosRes("", "", "", "1Gi")}), "shares=2 memory=1073741824")
	f("one container without a memory limit disables the pod memory limit",
		qosPod(nil, rr{qosRes("", "", "1", "128Mi"), qosRes("", "", "500m", "")}),
		"shares=1536 quota=150000/100000")
	f("an init container without a cpu limit disables the quota",
		qosPod(rr{qosRes("100m", "", "", "64Mi")}, rr{qosRes("", "", "1", "128Mi")}),
		"shares=1024 memory=134217728")
	f("init container larger than the app containers",
		qosPod(rr{qosRes("", "", "2", "1Gi")}, rr{qosRes("", "", "500m", "128Mi"), qosRes("", "", "500m", "128Mi")}),
		"shares=2048 quota=200000/100000 memory=1073741824")
	f("app containers together larger than any init container",
		qosPod(rr{qosRes("", "", "1500m", "100Mi"), qosRes("", "", "1", "300Mi")}, rr{qosRes("", "", "1", "128Mi"), qosRes("", "", "1", "128Mi")}),
		"shares=2048 quota=200000/100000 memory=314572800")
	f("the largest init container per resource", // cpu from one, memory from the other
		qosPod(rr{qosRes("", "", "3", "64Mi"), qosRes("", "", "100m", "2Gi")}, rr{qosRes("", "", "1", "1Gi")}),
		"shares=3072 quota=300000/100000 memory=2147483648")
	f("minimum shares", qosPod(nil, rr{qosRes("1m", "", "", "")}), "shares=2")
	f("minimum quota", qosPod(nil, rr{qosRes("", "", "5m", "16Mi")}), "shares=5 quota=1000/100000 memory=16777216")
	f("explicit zero request is not defaulted", qosPod(nil, rr{qosRes("0", "0", "1", "64Mi")}),
		"shares=2 quota=100000/100000 memory=67108864")
	f("shares capped at the kernel maximum", qosPod(nil, rr{qosRes("300", "", "", "")}), "shares=262144")

	// A sidecar (restartable init container) runs beside the app
	// containers and beside every init container after it.
	always := v1.ContainerRestartPolicyAlways
	sidecar := qosPod(rr{qosRes("", "", "500m", "100Mi"), qosRes("", "", "1", "50Mi")}, rr{qosRes("", "", "200m", "10Mi")})
	sidecar.Spec.InitContainers[0].RestartPolicy = &always
	f("sidecar", sidecar, "shares=1536 quota=150000/100000 memory=157286400")
	sidecar.Spec.InitContainers[1].Resources = qosRes("", "", "100m", "10Mi")
	f("sidecar and app containers larger than the init container", sidecar,
		"shares=716 quota=70000/100000 memory=115343360")

	overhead := qosPod(nil, rr{qosRes("", "", "1", "1Gi")})
	overhead.Spec.Overhead = v1.ResourceList{v1.ResourceCPU: resource.MustParse("250m"), v1.ResourceMemory: resource.MustParse("100Mi")}
	f("pod overhead", overhead, "shares=1280 quota=125000/100000 memory=1178599424")
	if want := int64(1<<30 + 100*mi); *PodResources(overhead).MemoryLimit != want {
		t.Errorf("overhead memory %d, want %d", *PodResources(overhead).MemoryLimit, want)
	}
}

func TestPodCPURequestMilli(t *testing.T) {
	f := func(pod *v1.Pod, want int64) {
		t.Helper()
		if got := PodCPURequestMilli(pod); got != want {
			t.Errorf("PodCPURequestMilli = %d, want %d", got, want)
		}
	}
	type rr = []v1.ResourceRequirements
	f(qosPod(nil, rr{{}}), 0)
	f(qosPod(nil, rr{qosRes("100m", "", "", ""), qosRes("", "", "2", "")}), 2100)
	f(qosPod(rr{qosRes("3", "", "", "")}, rr{qosRes("100m", "", "", "")}), 3000)
}

func TestMilliCPUConversions(t *testing.T) {
	f := func(milli int64, shares uint64, quota int64) {
		t.Helper()
		if got := MilliCPUToShares(milli); got != shares {
			t.Errorf("MilliCPUToShares(%d) = %d, want %d", milli, got, shares)
		}
		if got := MilliCPUToQuota(milli, CFSPeriodUS); got != quota {
			t.Errorf("MilliCPUToQuota(%d) = %d, want %d", milli, got, quota)
		}
	}
	f(-5, 2, 0)
	f(0, 2, 0)
	f(1, 2, 1000)
	f(9, 9, 1000)
	f(10, 10, 1000)
	f(100, 102, 10000)
	f(1000, 1024, 100000)
	f(2500, 2560, 250000)
	f(256000, 262144, 25600000)
	f(1000000, 262144, 100000000)
}

func TestSharesToWeight(t *testing.T) {
	f := func(shares, weight uint64) {
		t.Helper()
		if got := SharesToWeight(shares); got != weight {
			t.Errorf("SharesToWeight(%d) = %d, want %d", shares, got, weight)
		}
	}
	f(0, 0)
	f(1, 1) // below the v1 minimum: clamped
	f(2, 1)
	f(1024, 39)
	f(2048, 79)
	f(262144, 10000)
	f(1<<30, 10000)

	// weightToShares returns the smallest shares of each weight.
	for w := uint64(1); w <= 10000; w++ {
		s := weightToShares(w)
		if got := SharesToWeight(s); got != w {
			t.Fatalf("SharesToWeight(weightToShares(%d) = %d) = %d", w, s, got)
		}
		if s > minShares && SharesToWeight(s-1) == w {
			t.Fatalf("weightToShares(%d) = %d, but %d maps to it too", w, s, s-1)
		}
	}
	if weightToShares(0) != 0 {
		t.Error("weight 0 (unset) did not stay 0")
	}
}

func TestResourcesString(t *testing.T) {
	q, p := int64(-1), uint64(100000)
	if got := (Resources{CPUQuota: &q}).String(); got != "quota=-1/-" {
		t.Errorf("quota only: %q", got)
	}
	if got := (Resources{CPUPeriod: &p}).String(); got != "quota=-/100000" {
		t.Errorf("period only: %q", got)
	}
	if got := (Resources{PidsLimit: &q}).String(); got != "pids=-1" {
		t.Errorf("pids: %q", got)
	}
	if got := (Resources{}).String(); got != "{}" {
		t.Errorf("empty: %q", got)
	}
}
