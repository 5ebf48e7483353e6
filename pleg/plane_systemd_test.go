package pleg_test

import (
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podline/podline/cgroupfs"
	"github.com/podline/podline/pleg"
)

// With the systemd driver a container's cgroup is the runtime's scope in
// the pod slice: the plane watches that one, for sandboxes and containers,
// and finds it again when it adopts what runs after a restart.
func TestPlaneSystemdScopes(t *testing.T) {
	ctx, rt, _ := dialFake(t)
	mount := t.TempDir()
	layout := cgroupfs.Layout{Root: "/", PerQOS: true, Driver: cgroupfs.DriverSystemd, ScopePrefix: cgroupfs.ScopePrefix("containerd")}
	newPlane := func(cache *pleg.Cache, cg *stubCgroups) *pleg.Plane {
		p := pleg.NewPlane(pleg.PlaneConfig{
			Runtime: rt, Cache: cache, Notify: func(types.UID) {}, Cgroups: cg, CgroupMount: mount, Layout: layout,
			Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		})
		go p.Run(ctx)
		return p
	}

	cg := &stubCgroups{ids: map[string]uint64{}}
	plane := newPlane(pleg.NewCache(), cg)
	parent := layout.PodParent("u-1", v1.PodQOSBurstable)
	plane.SandboxStarted("u-1", "sb1", parent)
	plane.ContainerStarted("u-1", "sb1", "c1", parent)
	for _, id := range []string{"sb1", "c1"} {
		want := parent + "/cri-containerd-" + id + ".scope"
		if cg.id(want) == 0 {
			t.Errorf("%s: %s not watched (watched: %v)", id, want, cg.ids)
		}
	}

	// After a restart: only the container's scope is left.
	cache := pleg.NewCache()
	cache.UpsertSandbox("u-2", "p", "ns", &pleg.Sandbox{ID: "sb2", State: pleg.SandboxReady})
	cache.UpsertContainer("u-2", &pleg.Container{ID: "c2", SandboxID: "sb2", Name: "app", State: pleg.ContainerRunning, StartedAt: time.Now()})
	parent2 := layout.PodParent("u-2", v1.PodQOSBestEffort)
	if err := os.MkdirAll(filepath.Join(mount, parent2, "cri-containerd-c2.scope"), 0o755); err != nil {
		t.Fatal(err)
	}
	cg2 := &stubCgroups{ids: map[string]uint64{}}
	candidates := func(uid types.UID) []string {
		var out []string
		for _, q := range []v1.PodQOSClass{v1.PodQOSGuaranteed, v1.PodQOSBurstable, v1.PodQOSBestEffort} {
			out = append(out, layout.PodParent(uid, q))
		}
		return out
	}
	if n := newPlane(cache, cg2).Adopt(candidates); n != 1 {
		t.Errorf("adopted %d, want the container", n)
	}
	if cg2.id(parent2+"/cri-containerd-c2.scope") == 0 {
		t.Errorf("the adopted container's scope is not watched (watched: %v)", cg2.ids)
	}
}
