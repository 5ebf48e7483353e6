package ebpf

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/podline/podline/cgroupfs"
)

// TestEmptied: the event comes when the last process leaves, whether it
// exits or moves away, and not before.
func TestEmptied(t *testing.T) {
	tr := loadTracer(t, cgroup2Hierarchy)
	c := collect(t, tr)
	cg, id := watchNew(t, tr)
	elsewhere := newCgroup(t, cgroup2Root)

	a := start(t, cg, true, "/bin/sleep", "60")
	b := start(t, cg, true, "/bin/sleep", "60")
	a.cmd.Process.Kill()
	a.wait(t)
	c.expect(t, "exit of a", exitIn(id))
	c.none(t, "emptied while b is still inside", 300*time.Millisecond, emptied(id))

	moveTo(t, elsewhere, b.pid())
	c.expect(t, "emptied when b moved out", emptied(id))

	moveTo(t, cg, b.pid())
	c.none(t, "an event for becoming populated", 200*time.Millisecond, emptied(id))
	b.cmd.Process.Kill()
	b.wait(t)
	c.expect(t, "exit of b", exitIn(id))
	c.expect(t, "emptied when b exited", emptied(id))
}

// TestEmptiedIgnoresV1: kernfs ids are per hierarchy and a hybrid host's v1
// hierarchies reuse the numbers cgroup2 hands out. A v1 memory cgroup's id
// is put into the watched map, exactly as if a watched cgroup2 directory had
// the same id; the v1 cgroup then empties. A tracer filtering on the v1
// memory hierarchy sees that (the kernel event happens and carries the id);
// the production filter, on the same kernel event, must not.
func TestEmptiedIgnoresV1(t *testing.T) {
	memory := memoryHierarchy(t)
	prod := loadTracer(t, cgroup2Hierarchy)
	control := loadTracer(t, memory)
	prodEvents, controlEvents := collect(t, prod), collect(t, control)

	mcg := newCgroup(t, memoryV1Root)
	id := inode(t, mcg)
	for _, tr := range []*Tracer{prod, control} {
		if err := tr.Watch(id); err != nil {
			t.Fatal(err)
		}
	}
	p := start(t, "", false, "/bin/sleep", "60")
	moveTo(t, mcg, p.pid())
	p.cmd.Process.Kill()
	p.wait(t)

	r := controlEvents.expect(t, "emptied of the v1 cgroup under a v1 filter", emptied(id))
	t.Logf("v1 memory hierarchy %d, cgroup %s id %d: %+v", memory, filepath.Base(mcg), id, r.Event)
	prodEvents.none(t, "emptied of a v1 cgroup under the cgroup2 filter", 300*time.Millisecond, emptied(id))
}

func TestCgroupID(t *testing.T) {
	requireKernel(t)
	dir := newCgroup(t, cgroup2Root)
	id, err := cgroupfs.CgroupID(dir)
	if err != nil {
		t.Fatal(err)
	}
	if want := inode(t, dir); id != want {
		t.Errorf("CgroupID = %d, want the inode %d", id, want)
	}
	// The id the kernel reports for a process born there is checked by
	// TestExitEvents; here the refusals.
	if _, err := cgroupfs.CgroupID(os.TempDir()); err == nil {
		t.Error("CgroupID accepted a directory that is not on cgroup2")
	}
	if _, err := cgroupfs.CgroupID(filepath.Join(dir, "missing")); err == nil {
		t.Error("CgroupID accepted a missing directory")
	}
}
