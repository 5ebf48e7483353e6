// Package onefs removes directory trees that hold other people's mounts
// without ever reaching into them. A pod directory holds volume mounts:
// tmpfs emptyDirs and secrets, and bind mounts whose source may be a host
// directory. They are unmounted before the pod directory is removed, but
// an unmount can fail, and a plain recursive delete would then empty the
// mounted filesystem, a host directory included.
//
// So the tree is walked through directory file descriptors, never by path
// text: each entry is examined without following symlinks, compared by
// device and mount ID with the directory the removal started in, and a
// directory is opened only after that check (O_NOFOLLOW), and checked
// again once open. The mount ID catches bind mounts from the same
// filesystem, which share its device number. Anything on another mount is
// left alone and reported; everything else is removed.
//
// The package owns nothing but the removal; which entry to remove is the
// caller's business.
package onefs

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// ErrOtherMount marks an entry on another mount than the directory the
// removal started in: something is still mounted there.
var ErrOtherMount = errors.New("is on another mount (still mounted?)")

// ErrNotName marks a name that is not a single directory entry.
var ErrNotName = errors.New("is not a single directory entry name")

// RemoveEntry removes the entry name of directory dir and, when it is a
// directory, everything below it that lives on dir's mount. name is looked
// up in dir alone, never resolved as a path, so it can only ever be one of
// dir's own entries. An entry that does not exist is not an error. When
// anything below is on another mount (or name itself is a mount point) it
// is left in place, with the directories that lead to it, and the error
// wraps ErrOtherMount; the rest is removed.
func RemoveEntry(dir, name string) error {
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, "/\x00") {
		return fmt.Errorf("remove %q in %s: %w", name, dir, ErrNotName)
	}
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err == unix.ENOENT {
		return nil
	}
	if err != nil {
		return &os.PathError{Op: "open", Path: dir, Err: err}
	}
	defer unix.Close(fd)
	home, err := identify(fd, "", unix.AT_EMPTY_PATH)
	if err != nil {
		return &os.PathError{Op: "statx", Path: dir, Err: err}
	}
	return remover{home: home}.removeAt(fd, dir, name)
}

// mountID tells filesystems and mounts apart. mnt is 0 where the kernel
// does not report mount IDs (before 5.8); the device then stands alone.
type mountID struct {
	major, minor uint32
	mnt          uint64
}

type remover struct{ home mountID }

// identify statx'es name in dirfd without following a final symlink (a
// mount point on name is followed, as stat does: it shows the mount).
func identify(dirfd int, name string, flags int) (mountID, error) {
	var stx unix.Statx_t
	if err := unix.Statx(dirfd, name, flags|unix.AT_SYMLINK_NOFOLLOW, unix.STATX_TYPE|unix.STATX_MNT_ID, &stx); err != nil {
		return mountID{}, err
	}
	id := mountID{major: stx.Dev_major, minor: stx.Dev_minor}
	if stx.Mask&unix.STATX_MNT_ID != 0 {
		id.mnt = stx.Mnt_id
	}
	return id, nil
}

// isDir reports whether name in dirfd is a directory, not following a
// symlink.
func isDir(dirfd int, name string) (bool, error) {
	var st unix.Stat_t
	if err := unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return false, err
	}
	return st.Mode&unix.S_IFMT == unix.S_IFDIR, nil
}

// removeAt removes name in the directory dirfd (at path dirPath, used in
// messages only).
func (r remover) removeAt(dirfd int, dirPath, name string) error {
	path := filepath.Join(dirPath, name)
	id, err := identify(dirfd, name, 0)
	if err == unix.ENOENT {
		return nil
	}
	if err != nil {
		return &os.PathError{Op: "statx", Path: path, Err: err}
	}
	if id != r.home {
		return fmt.Errorf("%s %w", path, ErrOtherMount)
	}
	dir, err := isDir(dirfd, name)
	if err == unix.ENOENT {
		return nil
	}
	if err != nil {
		return &os.PathError{Op: "lstat", Path: path, Err: err}
	}
	flags := 0
	if dir {
		if err := r.removeBelow(dirfd, path, name); err != nil {
			return err
		}
		flags = unix.AT_REMOVEDIR
	}
	if err := unix.Unlinkat(dirfd, name, flags); err != nil && err != unix.ENOENT {
		return &os.PathError{Op: "remove", Path: path, Err: err}
	}
	return nil
}

// removeBelow empties the directory name in dirfd. Every entry is tried;
// the first error is returned.
func (r remover) removeBelow(dirfd int, path, name string) error {
	fd, err := unix.Openat(dirfd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err == unix.ENOENT {
		return nil
	}
	if err != nil {
		return &os.PathError{Op: "open", Path: path, Err: err}
	}
	f := os.NewFile(uintptr(fd), path)
	defer f.Close()
	// The entry may have changed between the check and the open; what was
	// opened is what is read.
	id, err := identify(fd, "", unix.AT_EMPTY_PATH)
	if err != nil {
		return &os.PathError{Op: "statx", Path: path, Err: err}
	}
	if id != r.home {
		return fmt.Errorf("%s %w", path, ErrOtherMount)
	}
	var first error
	for {
		// Entries already read may be removed while reading on: a
		// directory stream still returns every entry that stays.
		names, err := f.Readdirnames(1024)
		for _, n := range names {
			if err := r.removeAt(fd, path, n); err != nil && first == nil {
				first = err
			}
		}
		if err == io.EOF {
			return first
		}
		if err != nil {
			return errors.Join(first, fmt.Errorf("read %s: %w", path, err))
		}
	}
}
