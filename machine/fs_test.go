package machine

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// A tmpfs of known size and inode count, then a file written into it.
func TestFsStatsTmpfs(t *testing.T) {
	dir := t.TempDir()
	if err := unix.Mount("podline-fs-test", dir, "tmpfs", 0, "size=64m,nr_inodes=1000"); err != nil {
		t.Fatalf("mount a test tmpfs (tests run as root): %v", err)
	}
	t.Cleanup(func() {
		if err := unix.Unmount(dir, 0); err != nil {
			t.Errorf("unmount test tmpfs: %v", err)
		}
	})
	empty, err := FsStats(dir)
	if err != nil {
		t.Fatal(err)
	}
	if empty.Capacity != 64<<20 || empty.Used != 0 || empty.Available != 64<<20 || empty.Inodes != 1000 || empty.InodesUsed != 1 || empty.InodesFree != 999 {
		t.Fatalf("empty 64 MiB, 1000-inode tmpfs: %+v", empty)
	}
	if err := os.WriteFile(filepath.Join(dir, "f"), make([]byte, 5<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := FsStats(filepath.Join(dir, "f")) // any path in the filesystem
	if err != nil {
		t.Fatal(err)
	}
	want := Fs{Capacity: 64 << 20, Used: 5 << 20, Available: 59 << 20, Inodes: 1000, InodesUsed: 2, InodesFree: 998}
	if got != want {
		t.Fatalf("after writing 5 MiB:\n got %+v\nwant %+v", got, want)
	}
}

func TestFsStatsHost(t *testing.T) {
	got, err := FsStats("/")
	if err != nil {
		t.Fatal(err)
	}
	if got.Capacity == 0 || got.Used > got.Capacity || got.Available > got.Capacity-got.Used ||
		got.Inodes == 0 || got.InodesUsed+got.InodesFree != got.Inodes {
		t.Fatalf("implausible root filesystem: %+v", got)
	}
	if _, err := FsStats("/no/such/path"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("FsStats of a missing path: %v, want fs.ErrNotExist", err)
	}
}
