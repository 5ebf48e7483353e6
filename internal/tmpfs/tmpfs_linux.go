// Package tmpfs mounts the memory-backed volumes: emptyDir with medium
// Memory, and the secret and projected volumes that must never reach a
// disk. It owns nothing else about volumes.
package tmpfs

import (
	"fmt"
	"path/filepath"
	"strconv"

	"github.com/podline/podline/internal/mountinfo"
	"golang.org/x/sys/unix"
)

// Ensure mounts a tmpfs at dir with the given mode (and size, when
// positive) unless dir already is a mount point, so a repeated setup after
// a podline restart does not stack mounts.
func Ensure(dir string, mode uint32, sizeBytes int64) error {
	if mounted, err := IsMountPoint(dir); err != nil || mounted {
		return err
	}
	opts := "mode=" + strconv.FormatUint(uint64(mode), 8)
	if sizeBytes > 0 {
		opts += ",size=" + strconv.FormatInt(sizeBytes, 10)
	}
	if err := unix.Mount("tmpfs", dir, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, opts); err != nil {
		return fmt.Errorf("mount tmpfs at %s: %w", dir, err)
	}
	mountinfo.Changed()
	return nil
}

// IsMountPoint reports whether dir is on another device than its parent.
func IsMountPoint(dir string) (bool, error) {
	var st, parent unix.Stat_t
	if err := unix.Lstat(dir, &st); err != nil {
		return false, err
	}
	if err := unix.Lstat(filepath.Dir(dir), &parent); err != nil {
		return false, err
	}
	return st.Dev != parent.Dev, nil
}
