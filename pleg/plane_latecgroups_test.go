package pleg_test

import (
	"io"
	"log/slog"
	"slices"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/podline/podline/pleg"
)

// A cgroup notifier made after the plane started (the inotify instance
// limit refused it at start) watches what was registered before it, its
// notifications reach those containers, and a removal unwatches them.
func TestLateCgroupNotifierWatchesWhatRuns(t *testing.T) {
	ctx, rt, srv := dialFake(t)
	cache, n := pleg.NewCache(), &notified{uids: map[types.UID]int{}}
	plane := pleg.NewPlane(pleg.PlaneConfig{
		Runtime: rt, Cache: cache, Notify: n.notify, Kernel: &recordingKernel{},
		Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	go plane.Run(ctx)

	sb, id := runInFake(t, rt, cache, "late1")
	plane.SandboxStarted("late1", sb, "/kubepods/podlate1")
	plane.ContainerStarted("late1", sb, id, "/kubepods/podlate1")

	cgroups := &stubCgroups{ids: map[string]uint64{}}
	plane.SetCgroups(cgroups)
	cg := cgroups.id("/kubepods/podlate1/" + id)
	if cg == 0 || cgroups.id("/kubepods/podlate1/"+sb) == 0 {
		t.Fatalf("the late notifier watches %v, want the sandbox and the container", cgroups.ids)
	}

	if err := srv.ExitContainer(id, 2); err != nil {
		t.Fatal(err)
	}
	plane.OnEmptied(cg, time.Now())
	deadline := time.Now().Add(3 * time.Second)
	for c := cache.Get("late1").Container(id); c.State != pleg.ContainerExited || !c.Detailed; c = cache.Get("late1").Container(id) {
		if time.Now().After(deadline) {
			t.Fatalf("the late notifier's emptied did not reach the container: %+v", c)
		}
		time.Sleep(2 * time.Millisecond)
	}

	plane.SandboxRemoved(sb)
	cgroups.mu.Lock()
	removed := slices.Clone(cgroups.removed)
	cgroups.mu.Unlock()
	slices.Sort(removed)
	if want := []uint64{1, 2}; !slices.Equal(removed, want) {
		t.Fatalf("unwatched %v, want %v", removed, want)
	}
}
