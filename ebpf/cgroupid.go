package ebpf

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// CgroupID returns the id the BPF programs see for a cgroup2 directory
// (bpf_get_current_cgroup_id, a cgroup's kernfs id): its inode number. The
// directory must be on the cgroup2 mount (on a hybrid host
// /sys/fs/cgroup/unified): a v1 directory's inode is an id in another
// hierarchy and would match nothing, or the wrong cgroup.
func CgroupID(dir string) (uint64, error) {
	fd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return 0, fmt.Errorf("cgroup id of %s: %w", dir, err)
	}
	defer unix.Close(fd)
	var fs unix.Statfs_t
	if err := unix.Fstatfs(fd, &fs); err != nil {
		return 0, fmt.Errorf("cgroup id of %s: %w", dir, err)
	}
	if fs.Type != unix.CGROUP2_SUPER_MAGIC {
		return 0, fmt.Errorf("cgroup id of %s: not a cgroup2 directory (filesystem magic %#x)", dir, fs.Type)
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return 0, fmt.Errorf("cgroup id of %s: %w", dir, err)
	}
	return st.Ino, nil
}
