package volumes

import (
	"os"
	"testing"

	"github.com/podline/podline/internal/mountinfo"
	"github.com/podline/podline/internal/tmpfs"
)

// onTmpfs reports whether a tmpfs is mounted exactly at dir.
func onTmpfs(t *testing.T, dir string) bool {
	t.Helper()
	return countMounts(t, dir) > 0
}

func countMounts(t *testing.T, dir string) int {
	t.Helper()
	entries, err := mountinfo.Read()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range entries {
		if e.Dir == dir && e.FSType == "tmpfs" {
			n++
		}
	}
	return n
}

func TestEnsureTmpfsMountsOnce(t *testing.T) {
	dir := volumeDir(t)
	if mounted, err := tmpfs.IsMountPoint(dir); err != nil || mounted {
		t.Fatalf("fresh dir: mounted=%v err=%v", mounted, err)
	}
	for range 3 {
		if err := ensureTmpfs(dir); err != nil {
			t.Fatal(err)
		}
	}
	if n := countMounts(t, dir); n != 1 {
		t.Fatalf("%d tmpfs mounts at %s, want 1", n, dir)
	}
	if m := modeOf(t, dir); m.Perm() != 0o777 || m&os.ModeSticky == 0 {
		t.Fatalf("tmpfs root mode %v, want drwxrwxrwt", m)
	}
}
