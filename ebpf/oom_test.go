package ebpf

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestOOMVictim: a container's main process in a 32 MiB v1 memory cgroup
// allocates until the OOM killer picks it. The victim event names the
// victim's cgroup2 directory (not that of whoever ran into the limit), then
// its exit reports SIGKILL.
func TestOOMVictim(t *testing.T) {
	memoryHierarchy(t) // skips without a v1 memory controller
	tr := loadTracer(t, cgroup2Hierarchy)
	c := collect(t, tr)
	cg, id := watchNew(t, tr)

	mcg := newCgroup(t, memoryV1Root)
	limit := []byte("33554432")
	if err := os.WriteFile(filepath.Join(mcg, "memory.limit_in_bytes"), limit, 0); err != nil {
		t.Fatal(err)
	}
	// Without a swap limit the hog would swap instead of being killed.
	if err := os.WriteFile(filepath.Join(mcg, "memory.memsw.limit_in_bytes"), limit, 0); err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}

	cmd := helper(t, cg, "alloc")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	p := startCmd(t, cmd)
	moveTo(t, mcg, p.pid())
	if _, err := stdin.Write([]byte("go\n")); err != nil {
		t.Fatal(err)
	}
	ws := p.wait(t)
	if ws.Signal() != syscall.SIGKILL {
		t.Fatalf("the memory hog ended with %v, want killed by the OOM killer", ws)
	}

	r := c.expect(t, "OOM victim", func(e Event) bool { return e.Kind == KindOOMVictim && e.TGID == p.pid() })
	if r.CgroupID != id {
		t.Errorf("OOM victim in cgroup %d, want %d", r.CgroupID, id)
	}
	r = c.expect(t, "exit of the victim", exitIn(id))
	if r.ExitCode != 137 || r.Signal != 9 || r.TGID != p.pid() {
		t.Errorf("victim exit: code %d signal %d tgid %d, want 137, 9, %d", r.ExitCode, r.Signal, r.TGID, p.pid())
	}
}
