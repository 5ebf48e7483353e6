package stages

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
	v1 "k8s.io/api/core/v1"
)

// A hostPath volume names any path on the host, and its type asks podline
// to check it (Directory, File, Socket, CharDevice, BlockDevice) or to
// make it first (DirectoryOrCreate, FileOrCreate). Whatever exists is
// taken as the host has it: a path through /var/run (a link to /run on
// most hosts) checks and mounts what the link leads to, as on other
// nodes, and the runtime resolves the path the same way when it mounts.
//
// What podline makes, it makes only where the path says. Another pod
// that mounts a parent of the path can plant a link in it, and a link to
// nothing (`ln -s /etc/cron.d/x /shared/f`) would have a create that
// follows it make the link's target, as root, somewhere the pod never
// named. So each missing directory is made with mkdirat in its parent,
// held open, and opened again without following a link, and a missing
// file with O_CREAT|O_EXCL, which fails on any link: a link to nothing is
// refused, and a link swapped in between two steps is found, not
// followed.

// checkHostPath applies a hostPath volume's type check, creating the path
// for the *OrCreate types.
func checkHostPath(path string, typ *v1.HostPathType) error {
	t := v1.HostPathUnset
	if typ != nil {
		t = *typ
	}
	if !filepath.IsAbs(path) {
		return fmt.Errorf("hostPath %q is not absolute", path)
	}
	switch t {
	case v1.HostPathUnset:
		return nil
	case v1.HostPathDirectoryOrCreate:
		d, err := makeHostDirs(path)
		if err != nil {
			return err
		}
		return d.Close()
	case v1.HostPathFileOrCreate:
		if err := makeHostFile(path); err != nil {
			return err
		}
	}
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		if li, lerr := os.Lstat(path); lerr == nil && li.Mode()&fs.ModeSymlink != 0 {
			return fmt.Errorf("hostPath type check %s: %s is a symlink to nothing", t, path)
		}
	}
	if err != nil {
		return fmt.Errorf("hostPath type check %s: %w", t, err)
	}
	want := map[v1.HostPathType]func(fs.FileMode) bool{
		v1.HostPathDirectoryOrCreate: fs.FileMode.IsDir,
		v1.HostPathDirectory:         fs.FileMode.IsDir,
		v1.HostPathFileOrCreate:      fs.FileMode.IsRegular,
		v1.HostPathFile:              fs.FileMode.IsRegular,
		v1.HostPathSocket:            func(m fs.FileMode) bool { return m&fs.ModeSocket != 0 },
		v1.HostPathCharDev:           func(m fs.FileMode) bool { return m&fs.ModeCharDevice != 0 },
		v1.HostPathBlockDev:          func(m fs.FileMode) bool { return m&fs.ModeDevice != 0 && m&fs.ModeCharDevice == 0 },
	}[t]
	if want == nil {
		return fmt.Errorf("unknown hostPath type %q", t)
	}
	if !want(fi.Mode()) {
		return fmt.Errorf("hostPath type check failed: %s is not a %s", path, t)
	}
	return nil
}

// makeHostFile makes an empty file at path, and its missing parents,
// unless something is there already; checkHostPath then checks what is.
func makeHostFile(path string) error {
	parent, err := makeHostDirs(filepath.Dir(path))
	if err != nil {
		return err
	}
	defer parent.Close()
	fd, err := unix.Openat(int(parent.Fd()), filepath.Base(path),
		unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o644)
	if errors.Is(err, unix.EEXIST) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("create %s: %w", path, err)
	}
	return unix.Close(fd)
}

// makeHostDirs opens the directory at the absolute path, making each
// missing component with mode 0755 (less the umask). Existing components
// are followed as the host has them; one this call makes must still be
// the directory it made when it is opened (O_NOFOLLOW). The caller closes
// the returned directory.
func makeHostDirs(path string) (*os.File, error) {
	fd, err := unix.Open("/", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	done := "/"
	for _, part := range strings.Split(filepath.Clean(path), "/") {
		if part == "" {
			continue
		}
		next, err := openHostDir(fd, done, part)
		unix.Close(fd)
		if err != nil {
			return nil, err
		}
		fd, done = next, filepath.Join(done, part)
	}
	return os.NewFile(uintptr(fd), done), nil
}

// openHostDir opens part in the directory dirfd (named done), making it
// when missing.
func openHostDir(dirfd int, done, part string) (int, error) {
	name := filepath.Join(done, part)
	fd, err := unix.Openat(dirfd, part, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	switch {
	case err == nil:
		return fd, nil
	case errors.Is(err, unix.ENOTDIR):
		return -1, fmt.Errorf("hostPath %s: not a directory", name)
	case !errors.Is(err, unix.ENOENT):
		return -1, fmt.Errorf("hostPath %s: %w", name, err)
	}
	if err := unix.Mkdirat(dirfd, part, 0o755); err != nil && !errors.Is(err, unix.EEXIST) {
		return -1, fmt.Errorf("mkdir %s: %w", name, err)
	}
	// Made now, or by someone else meanwhile, or a link to nothing (which
	// the first open could not follow and mkdirat does not replace): only
	// a directory is taken.
	fd, err = unix.Openat(dirfd, part, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.ENOTDIR) || errors.Is(err, unix.ELOOP) {
		return -1, fmt.Errorf("hostPath %s: a symlink to nothing, or not a directory: podline creates nothing through it", name)
	}
	if err != nil {
		return -1, fmt.Errorf("hostPath %s: %w", name, err)
	}
	return fd, nil
}
