package logs

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"
)

// Error classes of a path that is not served, whatever a pod planted there.
var (
	// ErrNotRegular: the path names something other than a regular file
	// (or, for /logs/, a directory): a named pipe, a device, a socket.
	// It was looked at, never opened.
	ErrNotRegular = errors.New("not a regular file")
	// ErrLink: a container log's path goes through a symbolic link.
	ErrLink = errors.New("goes through a symbolic link")
)

// The log directories are written by pods: one with a hostPath volume
// there can put a FIFO, a device node (mknod, with the default
// CAP_MKNOD) or a symlink where a log should be, and podline reads as
// root. Opening is what does harm: an open of a device runs its driver's
// open, an open of a FIFO waits for a writer forever. So a path is first
// looked up as an O_PATH descriptor, which opens nothing, and only once
// that shows a regular file (or a directory to list) is the file opened,
// through the descriptor, so it is the very inode that was checked.

// looked is a path looked up but not opened: an O_PATH descriptor and
// what fstat says of it.
type looked struct {
	fd   int
	name string
	st   unix.Stat_t
}

// lookup resolves name from dirfd (AT_FDCWD for an absolute name) with
// resolve's RESOLVE_* flags, retrying a lookup a rename raced.
func lookup(dirfd int, name string, resolve uint64) (*looked, error) {
	how := &unix.OpenHow{Flags: unix.O_PATH | unix.O_CLOEXEC, Resolve: resolve}
	var (
		fd  int
		err error
	)
	for range 3 {
		// EAGAIN: a rename elsewhere on the system raced the lookup.
		if fd, err = unix.Openat2(dirfd, name, how); err != unix.EAGAIN {
			break
		}
	}
	if err != nil {
		return nil, err
	}
	l := &looked{fd: fd, name: name}
	if err := unix.Fstat(fd, &l.st); err != nil {
		unix.Close(fd)
		return nil, err
	}
	return l, nil
}

func (l *looked) close() { unix.Close(l.fd) }

func (l *looked) isDir() bool     { return l.st.Mode&unix.S_IFMT == unix.S_IFDIR }
func (l *looked) isRegular() bool { return l.st.Mode&unix.S_IFMT == unix.S_IFREG }

// notRegular is the ErrNotRegular error for l, saying what it is.
func (l *looked) notRegular() error {
	return fmt.Errorf("%w: %s", ErrNotRegular, kind(l.st.Mode))
}

// open opens the looked-up file for reading (flags adds O_DIRECTORY for a
// directory). Opening /proc/self/fd/N follows the descriptor to its file,
// not the name to whatever is there now; the identity is checked all the
// same, since serving another file than the one checked would be the
// very hole this closes.
func (l *looked) open(flags int) (*os.File, error) {
	fd, err := unix.Open("/proc/self/fd/"+strconv.Itoa(l.fd), unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NOCTTY|flags, 0)
	if err != nil {
		return nil, fmt.Errorf("reopen %s: %w", l.name, err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return nil, err
	}
	if st.Dev != l.st.Dev || st.Ino != l.st.Ino {
		unix.Close(fd)
		return nil, fmt.Errorf("BUG: reopen of %s gave another file", l.name)
	}
	return os.NewFile(uintptr(fd), l.name), nil
}

// kind names a file type that is not served.
func kind(mode uint32) string {
	switch mode & unix.S_IFMT {
	case unix.S_IFIFO:
		return "a named pipe"
	case unix.S_IFCHR:
		return "a character device"
	case unix.S_IFBLK:
		return "a block device"
	case unix.S_IFSOCK:
		return "a socket"
	case unix.S_IFLNK:
		return "a symbolic link"
	case unix.S_IFDIR:
		return "a directory"
	}
	return "not a file"
}

// OpenLog opens the container log at path, beneath dir, the pod log
// directory, for reading, as Read does and as whatever else reads a
// container's log should (the termination message of
// FallbackToLogsOnError). dir is opened as its path names it, as the
// runtime reaches it to write there: podline resolves --pod-logs-dir once
// at start, and a link above it made since (the operator's, say /var/log
// moved to another disk) is followed. Beneath it no component of path may
// be a symbolic link: the pod log directory is writable by any pod with
// a hostPath volume on it, and a link there could send another pod's
// `kubectl logs` to a file of the host, which podline reads as root. The
// kernel refuses a link at any step and any way out of dir
// (RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS), so a link swapped in after a
// check gains nothing either.
func OpenLog(dir, path string) (*os.File, error) {
	name, err := filepath.Rel(dir, path)
	if err != nil || !filepath.IsLocal(name) {
		return nil, fmt.Errorf("BUG: container log %s is not beneath the pod log directory %q", path, dir)
	}
	dirfd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("open pod log directory %s: %w", dir, err)
	}
	defer unix.Close(dirfd)
	l, err := lookup(dirfd, name, unix.RESOLVE_BENEATH|unix.RESOLVE_NO_SYMLINKS)
	switch {
	case errors.Is(err, unix.ELOOP):
		return nil, ErrLink
	case err != nil:
		return nil, err
	}
	defer l.close()
	if !l.isRegular() {
		return nil, l.notRegular()
	}
	return l.open(0)
}
