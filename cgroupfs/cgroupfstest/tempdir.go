package cgroupfstest

import (
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

// TempDir returns a new directory for a fixture tree, removed when the
// test ends. It prefers tmpfs (/dev/shm): a 1,000-pod tree is about ten
// thousand small files, which take a quarter of a second there and can
// take many seconds on a disk-backed /tmp.
func TempDir(tb testing.TB) string {
	tb.Helper()
	var st unix.Statfs_t
	if unix.Statfs("/dev/shm", &st) != nil || st.Type != unix.TMPFS_MAGIC {
		return tb.TempDir()
	}
	dir, err := os.MkdirTemp("/dev/shm", "podline-cgroupfstest-")
	if err != nil {
		return tb.TempDir()
	}
	tb.Cleanup(func() {
		if err := os.RemoveAll(dir); err != nil {
			tb.Errorf("remove fixture tree: %v", err)
		}
	})
	return dir
}
