package stats

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/podline/podline/cgroupfs"
	"github.com/podline/podline/cgroupfs/cgroupfstest"
	"github.com/podline/podline/pleg"
)

// With the systemd driver the pod's stats come from its slice, a
// container's from the runtime's scope in it, and the pod's network from a
// process of its sandbox's scope.
func TestCollectSystemd(t *testing.T) {
	root := cgroupfstest.TempDir(t)
	sd := cgroupfs.Layout{Root: "/podline-e2e", PerQOS: true, Driver: cgroupfs.DriverSystemd, ScopePrefix: cgroupfs.ScopePrefix("containerd")}
	const uid, cid, sbID = "0b5c-77", "c0ffee", "5a4db0c5"
	parent := sd.PodParent(uid, v1.PodQOSBestEffort)
	st := cgroupfs.Stats{
		CPUUsageNanos: 4e9, MemoryUsage: 30 << 20, MemoryWorkingSet: 20 << 20, MemoryRSS: 10 << 20, MemoryCache: 10 << 20,
		Pids: 3, HasCPU: true, HasMemory: true, HasPids: true,
	}
	if err := cgroupfstest.WriteV2(root, parent, st); err != nil {
		t.Fatal(err)
	}
	st.CPUUsageNanos = 1e9
	if err := cgroupfstest.WriteV2(root, parent+"/cri-containerd-"+cid+".scope", st); err != nil {
		t.Fatal(err)
	}
	sbScope := filepath.Join(root, parent, "cri-containerd-"+sbID+".scope")
	if err := os.MkdirAll(sbScope, 0o755); err != nil {
		t.Fatal(err)
	}
	// This process stands in for the pause process: its network is read.
	if err := os.WriteFile(filepath.Join(sbScope, "cgroup.procs"), []byte(strconv.Itoa(os.Getpid())+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cache := pleg.NewCache()
	cache.UpsertSandbox(uid, "p", "ns", &pleg.Sandbox{ID: sbID, State: pleg.SandboxReady, CreatedAt: time.Now()})
	start := metav1.NewTime(time.Unix(1_795_000_000, 0))
	pods := []v1.Pod{{
		ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", UID: uid},
		Spec:       v1.PodSpec{Containers: []v1.Container{{Name: "app", Image: "busybox"}}},
		Status: v1.PodStatus{StartTime: &start, ContainerStatuses: []v1.ContainerStatus{{
			Name: "app", ContainerID: "containerd://" + cid, Image: "busybox",
			State: v1.ContainerState{Running: &v1.ContainerStateRunning{StartedAt: start}},
		}}},
	}}
	c := &Collector{
		NodeName: "node-a", Pods: podsOf(pods), Cache: cache, Layout: sd,
		Reader: cgroupfs.NewReaderAt(true, root), Rates: &cgroupfs.RateTracker{}, RootDir: root, CgroupMount: root,
	}
	snap, err := c.Collect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.Pods) != 1 {
		t.Fatalf("%d pods, want 1", len(snap.Pods))
	}
	p := snap.Pods[0]
	if p.Cgroup.CPUUsageNanos != 4e9 {
		t.Errorf("pod cpu %d, want the slice's", p.Cgroup.CPUUsageNanos)
	}
	if len(p.Containers) != 1 || p.Containers[0].Cgroup.CPUUsageNanos != 1e9 {
		t.Errorf("containers %+v, want the scope's stats", p.Containers)
	}
	if len(p.Network) == 0 {
		t.Error("no network: the sandbox's scope was not read")
	}
}
