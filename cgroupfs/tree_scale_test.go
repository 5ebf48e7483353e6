package cgroupfs

import (
	"strconv"
	"sync"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// EnsurePod of many pods at once, with the Burstable shares changing
// meanwhile, as a node's pod workers do it.
func TestTreeConcurrentPods(t *testing.T) {
	kt := newKernelTree(t)
	if err := kt.EnsureQOS(2000, 4<<30); err != nil {
		t.Fatal(err)
	}
	const pods = 64
	var wg sync.WaitGroup
	errs := make(chan error, pods*2)
	for i := range pods {
		wg.Go(func() {
			pod := qosPod(nil, []v1.ResourceRequirements{qosRes("50m", "", strconv.Itoa(i+1)+"00m", strconv.Itoa(i+1)+"Mi")})
			pod.UID = types.UID("c" + strconv.Itoa(i))
			if err := kt.EnsurePod(kt.layout.PodParent(pod.UID, QOSClass(pod)), PodResources(pod)); err != nil {
				errs <- err
			}
			if err := kt.SetBurstableCPU(int64(100 * (i + 1))); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for i := range pods {
		parent := kt.layout.PodParent(types.UID("c"+strconv.Itoa(i)), v1.PodQOSBurstable)
		kt.expectV1(t, "cpu", parent, "cpu.cfs_quota_us", strconv.Itoa((i+1)*10000))
		kt.expectV1(t, "memory", parent, "memory.limit_in_bytes", strconv.Itoa((i+1)<<20))
	}
	if err := kt.SetBurstableCPU(6400); err != nil {
		t.Fatal(err)
	}
	kt.expectV1(t, "cpu", kt.layout.Root+"/kubepods/burstable", "cpu.shares", "6553")
}

// BenchmarkTreeEnsurePod: the cost of a new pod's cgroup with its limits,
// in every v1 hierarchy, for a Guaranteed pod (shares, quota and memory
// limit written) and a BestEffort one (shares only). With -benchtime
// 10000x the last pods are made beside 10,000 siblings, as on a dense node.
func BenchmarkTreeEnsurePod(b *testing.B) {
	gPod, bePod := samplePodsByQOS()
	for _, c := range []struct {
		name string
		pod  *v1.Pod
	}{{"guaranteed", gPod}, {"besteffort", bePod}} {
		b.Run("qos="+c.name, func(b *testing.B) { benchEnsurePod(b, c.pod) })
	}
}

func benchEnsurePod(b *testing.B, pod *v1.Pod) {
	kt := newKernelTree(b)
	if err := kt.EnsureQOS(2000, 4<<30); err != nil {
		b.Fatal(err)
	}
	r := PodResources(pod)
	qos := QOSClass(pod)
	h, err := FindHierarchies()
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	var parents []string
	for i := 0; b.Loop(); i++ {
		parent := kt.layout.PodParent(types.UID("bench"+strconv.Itoa(i)), qos)
		if err := kt.EnsurePod(parent, r); err != nil {
			b.Fatal(err)
		}
		parents = append(parents, parent)
	}
	b.StopTimer()
	for _, p := range parents {
		if err := h.RemovePod(p); err != nil {
			b.Fatal(err)
		}
	}
}

func samplePodsByQOS() (guaranteed, bestEffort *v1.Pod) {
	_, guaranteed = samplePods()
	bestEffort = qosPod(nil, []v1.ResourceRequirements{{}})
	return guaranteed, bestEffort
}

// BenchmarkTreeRemovePod: the cost of removing a pod's cgroup from every
// v1 hierarchy, for pods made as benchEnsurePod makes them. With
// -benchtime 10000x the first pods are removed beside 10,000 siblings, as
// when a dense node is drained; set against BenchmarkTreeEnsurePod, it
// says whether a teardown's cgroup work costs more than a start's.
func BenchmarkTreeRemovePod(b *testing.B) {
	_, bePod := samplePodsByQOS()
	kt := newKernelTree(b)
	if err := kt.EnsureQOS(2000, 4<<30); err != nil {
		b.Fatal(err)
	}
	h, err := FindHierarchies()
	if err != nil {
		b.Fatal(err)
	}
	r, qos := PodResources(bePod), QOSClass(bePod)
	var parents []string
	for i := range b.N {
		parent := kt.layout.PodParent(types.UID("bench"+strconv.Itoa(i)), qos)
		if err := kt.EnsurePod(parent, r); err != nil {
			b.Fatal(err)
		}
		parents = append(parents, parent)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for _, p := range parents {
		if err := h.RemovePod(p); err != nil {
			b.Fatal(err)
		}
	}
}
