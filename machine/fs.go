package machine

import (
	"fmt"
	"io/fs"

	"golang.org/x/sys/unix"
)

// Fs is the capacity of the filesystem holding a path, in bytes and
// inodes, as the Summary API's node fs and imageFs report it.
type Fs struct {
	// Capacity is the filesystem's size; Available what unprivileged
	// users may still write (less than Capacity − Used on filesystems
	// that reserve blocks for root, as ext4 does).
	Capacity, Available, Used      uint64
	Inodes, InodesFree, InodesUsed uint64
}

// FsStats statfs()s path. A missing path is an error wrapping
// fs.ErrNotExist.
func FsStats(path string) (Fs, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(path, &st); err != nil {
		return Fs{}, fmt.Errorf("filesystem stats: %w", &fs.PathError{Op: "statfs", Path: path, Err: err})
	}
	// Block counts are in fragment-size units (statvfs's f_frsize); Linux
	// sets it to the block size where a filesystem does not say.
	unit := uint64(st.Frsize)
	if unit == 0 {
		unit = uint64(st.Bsize)
	}
	out := Fs{
		Capacity:   st.Blocks * unit,
		Available:  st.Bavail * unit,
		Inodes:     st.Files,
		InodesFree: st.Ffree,
	}
	if st.Blocks > st.Bfree {
		out.Used = (st.Blocks - st.Bfree) * unit
	}
	if st.Files > st.Ffree {
		out.InodesUsed = st.Files - st.Ffree
	}
	return out, nil
}
