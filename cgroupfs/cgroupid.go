package cgroupfs

import (
	"fmt"
	"io/fs"

	"golang.org/x/sys/unix"
)

// CgroupID returns the id of a cgroup2 directory: its inode number, which
// is the kernfs node id that bpf_get_current_cgroup_id() and
// name_to_handle_at() report for the cgroup. A missing directory is an
// error wrapping fs.ErrNotExist; a directory outside a cgroup2 mount is an
// error, since its inode number means nothing to the kernel's cgroup code.
func CgroupID(dir string) (uint64, error) {
	var st unix.Stat_t
	if err := unix.Stat(dir, &st); err != nil {
		return 0, &fs.PathError{Op: "stat", Path: dir, Err: err}
	}
	var sfs unix.Statfs_t
	if err := unix.Statfs(dir, &sfs); err != nil {
		return 0, &fs.PathError{Op: "statfs", Path: dir, Err: err}
	}
	if sfs.Type != unix.CGROUP2_SUPER_MAGIC || st.Mode&unix.S_IFMT != unix.S_IFDIR {
		return 0, fmt.Errorf("cgroup id of %s: not a cgroup2 directory", dir)
	}
	return st.Ino, nil
}
