package cgroupfs

import (
	"path/filepath"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// The QoS cgroups EnsurePod holds open can be removed and made again
// behind the Tree's back (an operator's cleanup, then a restart of the
// tree): the next pod still lands in the new ones, with its cpuset usable.
func TestTreeEnsurePodAfterQOSRemade(t *testing.T) {
	kt := newKernelTree(t)
	if err := kt.EnsureQOS(2000, 4<<30); err != nil {
		t.Fatal(err)
	}
	_, bePod := samplePodsByQOS()
	r := PodResources(bePod)
	first := kt.layout.PodParent(types.UID("first"), v1.PodQOSBestEffort)
	if err := kt.EnsurePod(first, r); err != nil {
		t.Fatal(err)
	}
	for _, mnt := range kt.all {
		if err := removeTree(filepath.Join(mnt, kt.layout.Root)); err != nil {
			t.Fatal(err)
		}
	}
	if err := kt.EnsureQOS(2000, 4<<30); err != nil {
		t.Fatal(err)
	}
	second := kt.layout.PodParent(types.UID("second"), v1.PodQOSBestEffort)
	if err := kt.EnsurePod(second, r); err != nil {
		t.Fatalf("EnsurePod after the QoS cgroups were made again: %v", err)
	}
	kt.expectDirs(t, second)
	kt.expectV1(t, "cpu", second, "cpu.shares", "2")
	cpus := kt.v1File(t, "cpuset", filepath.Dir(second), "cpuset.cpus")
	kt.expectV1(t, "cpuset", second, "cpuset.cpus", cpus)
}

// A pod cgroup that exists takes the general path: its limits are
// rewritten, including back to a new cgroup's defaults, which the fast
// path never writes.
func TestTreeEnsurePodRewritesExisting(t *testing.T) {
	kt := newKernelTree(t)
	if err := kt.EnsureQOS(2000, 4<<30); err != nil {
		t.Fatal(err)
	}
	parent := kt.layout.PodParent(types.UID("re"), v1.PodQOSGuaranteed)
	shares, quota, period, mem := uint64(512), int64(50000), uint64(CFSPeriodUS), int64(64<<20)
	if err := kt.EnsurePod(parent, Resources{CPUShares: &shares, CPUQuota: &quota, CPUPeriod: &period, MemoryLimit: &mem}); err != nil {
		t.Fatal(err)
	}
	kt.expectV1(t, "cpu", parent, "cpu.cfs_quota_us", "50000")
	kt.expectV1(t, "memory", parent, "memory.limit_in_bytes", "67108864")
	shares, quota, mem = defaultShares, -1, -1
	if err := kt.EnsurePod(parent, Resources{CPUShares: &shares, CPUQuota: &quota, CPUPeriod: &period, MemoryLimit: &mem}); err != nil {
		t.Fatal(err)
	}
	kt.expectV1(t, "cpu", parent, "cpu.shares", "1024")
	kt.expectV1(t, "cpu", parent, "cpu.cfs_quota_us", "-1")
	kt.expectV1(t, "memory", parent, "memory.limit_in_bytes", "9223372036854771712")
}
