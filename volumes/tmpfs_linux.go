package volumes

import (
	"fmt"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// ensureTmpfs mounts a tmpfs at dir unless dir is already a mount point,
// so secrets and tokens never reach a disk and a repeated setup (after a
// podline restart, say) does not stack mounts. Mode 1777 is what the
// volume looks like on other nodes; containers get it read-only.
func ensureTmpfs(dir string) error {
	mounted, err := isMountPoint(dir)
	if err != nil || mounted {
		return err
	}
	if err := unix.Mount("tmpfs", dir, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=1777"); err != nil {
		return fmt.Errorf("mount tmpfs at %s: %w", dir, err)
	}
	return nil
}

// isMountPoint reports whether dir is on another device than its parent.
func isMountPoint(dir string) (bool, error) {
	var st, parent unix.Stat_t
	if err := unix.Lstat(dir, &st); err != nil {
		return false, err
	}
	if err := unix.Lstat(filepath.Dir(dir), &parent); err != nil {
		return false, err
	}
	return st.Dev != parent.Dev, nil
}
