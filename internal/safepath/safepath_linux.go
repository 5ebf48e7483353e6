// Package safepath resolves paths that a container controls without ever
// leaving the directory they must stay in.
//
// A volume's contents belong to the pod: any container that mounts it can
// replace a directory with a symlink (`ln -s / /scratch/x`). A path joined
// as text and handed to the runtime is resolved again later by runc, on the
// host, so `subPath: x` would give the next container the host's root. Here
// every lookup goes through openat2 with RESOLVE_BENEATH, which the kernel
// fails with EXDEV as soon as a step (a "..", an absolute symlink, a
// relative one climbing out) would leave the base directory, and the
// result is pinned by a bind mount of the opened file descriptor, so no
// later rename or symlink swap inside the volume can change what the
// runtime mounts.
//
// The package owns nothing but these lookups; where the base directory and
// the bind target live is the caller's business.
package safepath

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/podline/podline/internal/mountinfo"
	"golang.org/x/sys/unix"
)

// ErrEscapes marks a path that resolves outside its base directory, or
// through a link the kernel will not follow beneath it (an absolute
// symlink, a /proc magic link).
var ErrEscapes = errors.New("resolves outside the volume")

// resolveBeneath keeps every lookup inside the base directory; magic links
// (/proc/<pid>/fd/…, /proc/<pid>/root) are refused outright since they can
// point anywhere.
const resolveBeneath = unix.RESOLVE_BENEATH | unix.RESOLVE_NO_MAGICLINKS

// OpenBeneath opens rel inside base as an O_PATH descriptor. Symlinks are
// followed only while they stay beneath base; an escape is ErrEscapes.
// The caller closes the returned file.
func OpenBeneath(base, rel string) (*os.File, error) {
	if err := checkRelative(rel); err != nil {
		return nil, err
	}
	root, err := openDir(base)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	return openAt(root, base, rel, unix.O_PATH)
}

// MkdirAll makes rel, and any missing parent, inside base with mode perm
// (umask not applied). Existing components are followed only while they
// resolve beneath base, so a planted symlink cannot make it create
// directories elsewhere. An existing rel of another type is left as it is:
// the bind that follows decides what it can mount.
func MkdirAll(base, rel string, perm fs.FileMode) error {
	if err := checkRelative(rel); err != nil {
		return err
	}
	root, err := openDir(base)
	if err != nil {
		return err
	}
	defer root.Close()
	parts := strings.Split(filepath.Clean(rel), "/")
	done := ""
	for _, part := range parts {
		next := filepath.Join(done, part)
		f, err := openAt(root, base, next, unix.O_PATH)
		if err == nil {
			f.Close()
			done = next
			continue
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		if err := mkdirIn(root, base, done, part, perm); err != nil {
			return err
		}
		done = next
	}
	return nil
}

// mkdirIn makes one directory named part inside the already resolved
// parent (relative to root). mkdirat never follows a link at the last
// component: a symlink planted there meanwhile gives EEXIST, and the next
// step's lookup decides whether it may be followed.
func mkdirIn(root *os.File, base, parent, part string, perm fs.FileMode) error {
	dir := root
	if parent != "" {
		d, err := openAt(root, base, parent, unix.O_PATH|unix.O_DIRECTORY)
		if err != nil {
			return err
		}
		defer d.Close()
		dir = d
	}
	err := unix.Mkdirat(int(dir.Fd()), part, uint32(perm.Perm()))
	if errors.Is(err, unix.EEXIST) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("mkdir %s: %w", filepath.Join(parent, part), err)
	}
	made, err := openAt(dir, base, part, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW)
	if err != nil {
		return err
	}
	defer made.Close()
	// mkdirat applies the umask; the caller's mode is what the volume
	// promises its users (0777 in an emptyDir).
	if err := unix.Fchmod(int(made.Fd()), uint32(perm.Perm())); err != nil {
		return fmt.Errorf("chmod %s: %w", filepath.Join(parent, part), err)
	}
	return nil
}

// BindBeneath bind-mounts rel, resolved inside base, onto target, making
// target (an empty file or directory, matching rel) first. target must be
// somewhere no container can write. A mount already on target (a previous
// instance of the container) is replaced. The bind is of the opened
// descriptor, not of a path: what was checked is what gets mounted.
func BindBeneath(base, rel, target string) error {
	src, err := OpenBeneath(base, rel)
	if err != nil {
		return err
	}
	defer src.Close()
	var st unix.Stat_t
	if err := unix.Fstat(int(src.Fd()), &st); err != nil {
		return fmt.Errorf("stat %s: %w", rel, err)
	}
	if st.Mode&unix.S_IFMT == unix.S_IFLNK {
		// O_PATH on a final symlink that RESOLVE_BENEATH refused to follow
		// cannot happen, but mounting a link would mount its target.
		return fmt.Errorf("%s: %w", rel, ErrEscapes)
	}
	// The mount table changes below, on success or halfway.
	defer mountinfo.Changed()
	if err := makeTarget(target, st.Mode&unix.S_IFMT == unix.S_IFDIR); err != nil {
		return err
	}
	if err := unix.Unmount(target, unix.MNT_DETACH); err != nil && !errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.ENOENT) {
		return fmt.Errorf("unmount previous %s: %w", target, err)
	}
	fdPath := "/proc/self/fd/" + strconv.Itoa(int(src.Fd()))
	if err := unix.Mount(fdPath, target, "", unix.MS_BIND, ""); err != nil {
		return fmt.Errorf("bind %s onto %s: %w", rel, target, err)
	}
	return nil
}

// makeTarget makes the bind target as the type the source has: a bind
// needs a directory over a directory and a file over a file.
func makeTarget(target string, dir bool) error {
	if err := os.MkdirAll(filepath.Dir(target), 0o750); err != nil {
		return err
	}
	fi, err := os.Lstat(target)
	switch {
	case err == nil && fi.IsDir() == dir && fi.Mode()&fs.ModeSymlink == 0:
		return nil
	case err == nil:
		// A previous instance mounted the other type: the subPath changed
		// type meanwhile.
		unix.Unmount(target, unix.MNT_DETACH)
		if err := os.Remove(target); err != nil {
			return fmt.Errorf("replace bind target %s: %w", target, err)
		}
	case !errors.Is(err, fs.ErrNotExist):
		return err
	}
	if dir {
		return os.Mkdir(target, 0o750)
	}
	f, err := os.OpenFile(target, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o640)
	if err != nil {
		return err
	}
	return f.Close()
}

func openDir(base string) (*os.File, error) {
	fd, err := unix.Open(base, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("open volume %s: %w", base, err)
	}
	return os.NewFile(uintptr(fd), base), nil
}

// openAt resolves rel beneath dir; base names dir in errors.
func openAt(dir *os.File, base, rel string, flags int) (*os.File, error) {
	fd, err := unix.Openat2(int(dir.Fd()), rel, &unix.OpenHow{
		Flags:   uint64(flags | unix.O_CLOEXEC),
		Resolve: resolveBeneath,
	})
	switch {
	case errors.Is(err, unix.EXDEV), errors.Is(err, unix.ELOOP):
		return nil, fmt.Errorf("%s: %w", rel, ErrEscapes)
	case errors.Is(err, unix.ENOENT):
		return nil, fmt.Errorf("%s: %w", rel, fs.ErrNotExist)
	case err != nil:
		return nil, fmt.Errorf("open %s in %s: %w", rel, base, err)
	}
	return os.NewFile(uintptr(fd), filepath.Join(base, rel)), nil
}

// checkRelative refuses what no lookup beneath a base can mean.
func checkRelative(rel string) error {
	if rel == "" || filepath.IsAbs(rel) {
		return fmt.Errorf("%q must be a relative path", rel)
	}
	return nil
}
