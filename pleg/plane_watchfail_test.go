package pleg_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podline/podline/cgroupfs"
	"github.com/podline/podline/cri"
	"github.com/podline/podline/pleg"
)

// failingCgroups is a cgroup notifier that cannot watch anything, as when
// podline is out of file descriptors.
type failingCgroups struct{}

func (failingCgroups) Watch(path string) (uint64, error) {
	return 0, errors.New("watch cgroup " + path + ": eventfd: " + syscall.EMFILE.Error())
}

func (failingCgroups) Unwatch(uint64) {}

// recordingKernel is the eBPF tracer's watch list.
type recordingKernel struct {
	mu      sync.Mutex
	watched []uint64
}

func (k *recordingKernel) Watch(id uint64) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.watched = append(k.watched, id)
	return nil
}

func (k *recordingKernel) Unwatch(uint64) error { return nil }

// A cgroup the notifier cannot watch still gets the kernel tracer's
// watch, from its id alone, and the tracer's exit reaches the cache; the
// notifier's failure used to leave the container to the relist.
func TestNotifierFailureKeepsTheKernelWatch(t *testing.T) {
	mount := cgroup2Root(t)
	ctx, rt, srv := dialFake(t)
	cache, n, kernel := pleg.NewCache(), &notified{uids: map[types.UID]int{}}, &recordingKernel{}
	plane := pleg.NewPlane(pleg.PlaneConfig{
		Runtime: rt, Cache: cache, Notify: n.notify, Kernel: kernel, Cgroups: failingCgroups{},
		CgroupMount: mount, Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	go plane.Run(ctx)

	const uid = "wf1"
	sb, id := runInFake(t, rt, cache, uid)
	parent := "/podline-pleg-test-" + strconv.Itoa(os.Getpid())
	dir := filepath.Join(mount, parent, id)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		os.Remove(dir)
		os.Remove(filepath.Dir(dir))
	})
	cgroupID, err := cgroupfs.CgroupID(dir)
	if err != nil {
		t.Fatal(err)
	}
	plane.ContainerStarted(uid, sb, id, parent)
	kernel.mu.Lock()
	watched := slices.Clone(kernel.watched)
	kernel.mu.Unlock()
	if !slices.Equal(watched, []uint64{cgroupID}) {
		t.Fatalf("kernel watches %v, want the cgroup's id %d", watched, cgroupID)
	}
	n.take()
	if err := srv.ExitContainer(id, 137); err != nil {
		t.Fatal(err)
	}
	plane.OnExit(cgroupID, 137, time.Now())
	deadline := time.Now().Add(3 * time.Second)
	for c := cache.Get(uid).Container(id); c.State != pleg.ContainerExited || c.ExitCode != 137; c = cache.Get(uid).Container(id) {
		if time.Now().After(deadline) {
			t.Fatalf("the exit the kernel reported and the runtime confirmed never reached the cache: %+v", c)
		}
		time.Sleep(2 * time.Millisecond)
	}
	if got := n.take(); got[uid] != 1 {
		t.Fatalf("notified %v", got)
	}
}

// cgroup2Root returns the cgroup2 mount a test makes its cgroups in: as
// root, since making them needs it.
func cgroup2Root(t *testing.T) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Fatal("needs root: it makes cgroups")
	}
	mount := cgroupfs.UnifiedMount()
	if mount == "" {
		t.Fatal("no cgroup2 mount")
	}
	return mount
}

// runInFake starts a sandbox and a container in the fake runtime and
// records them in the cache, as the stages would.
func runInFake(t *testing.T, rt *cri.Client, cache *pleg.Cache, uid types.UID) (sandboxID, containerID string) {
	t.Helper()
	ctx := context.Background()
	labels := map[string]string{cri.LabelPodUID: string(uid), cri.LabelPodName: "p", cri.LabelPodNamespace: "ns"}
	sbCfg := &runtimeapi.PodSandboxConfig{Metadata: &runtimeapi.PodSandboxMetadata{Name: "p-" + string(uid), Namespace: "ns", Uid: string(uid)}, Labels: labels}
	sb, err := rt.RunPodSandbox(ctx, sbCfg, "")
	if err != nil {
		t.Fatal(err)
	}
	id, err := rt.CreateContainer(ctx, sb, &runtimeapi.ContainerConfig{
		Metadata: &runtimeapi.ContainerMetadata{Name: "app"}, Image: &runtimeapi.ImageSpec{Image: "busybox"}, Labels: labels,
	}, sbCfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := rt.StartContainer(ctx, id); err != nil {
		t.Fatal(err)
	}
	cache.UpsertSandbox(uid, "p", "ns", &pleg.Sandbox{ID: sb, State: pleg.SandboxReady})
	cache.UpsertContainer(uid, &pleg.Container{ID: id, SandboxID: sb, Name: "app", State: pleg.ContainerRunning, StartedAt: time.Now()})
	return sb, id
}
