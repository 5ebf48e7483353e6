package pleg_test

import (
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/podline/podline/pleg"
)

// After lost events the plane reads every watched cgroup, and an exit
// whose event was lost reaches the cache even though the runtime reports
// it late: the inspection asks again until it does. A cgroup that still
// has its process is left alone.
func TestRecheckFindsTheExitALostEventCarried(t *testing.T) {
	mount := cgroup2Root(t)
	ctx, rt, srv := dialFake(t)
	cache, n := pleg.NewCache(), &notified{uids: map[types.UID]int{}}
	plane := pleg.NewPlane(pleg.PlaneConfig{
		Runtime: rt, Cache: cache, Notify: n.notify, Kernel: &recordingKernel{},
		CgroupMount: mount, Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	go plane.Run(ctx)

	parent := "/podline-pleg-recheck-" + strconv.Itoa(os.Getpid())
	t.Cleanup(func() { os.Remove(filepath.Join(mount, parent)) })
	run := func(uid types.UID) (id string, proc *exec.Cmd) {
		_, id = runInFake(t, rt, cache, uid)
		dir := filepath.Join(mount, parent, id)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		proc = exec.Command("sleep", "3600")
		if err := proc.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			proc.Process.Kill()
			proc.Wait()
			os.Remove(dir)
		})
		if err := os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(strconv.Itoa(proc.Process.Pid)), 0); err != nil {
			t.Fatal(err)
		}
		sb := cache.Get(uid).Container(id).SandboxID
		plane.ContainerStarted(uid, sb, id, parent)
		return id, proc
	}
	exitedID, exited := run("rc1")
	liveID, _ := run("rc2")

	// The process dies and its event is lost: nothing tells the plane.
	exited.Process.Kill()
	exited.Wait()
	if got := plane.Recheck(); got != 1 {
		t.Fatalf("Recheck found %d empty cgroups, want 1", got)
	}
	// The runtime learns of the exit well after the first look.
	time.Sleep(100 * time.Millisecond)
	if err := srv.ExitContainer(exitedID, 137); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(3 * time.Second)
	for {
		c := cache.Get("rc1").Container(exitedID)
		if c.State == pleg.ContainerExited && c.ExitCode == 137 && c.Detailed {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the exit never reached the cache: %+v", c)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if c := cache.Get("rc2").Container(liveID); c.State != pleg.ContainerRunning {
		t.Fatalf("the container still running was changed: %+v", c)
	}
}
