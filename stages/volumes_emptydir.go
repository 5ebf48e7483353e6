package stages

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	v1 "k8s.io/api/core/v1"

	"github.com/podline/podline/internal/fsgroup"
	"github.com/podline/podline/internal/tmpfs"
)

// An emptyDir looks as it does on other nodes, because images and charts
// are written against it:
//
//	root on disk      0777: any container user may write
//	root in memory    1777, tmpfs's own: users cannot remove each
//	                  other's files
//	with fsGroup G    group G on the root, with group read, write,
//	                  search and setgid, so what containers create
//	                  joins G: a root of 2777 on disk, 3777 in memory
//
// Ownership is set once, at the volume's first setup, before any container
// of the pod has run: what containers do to the files afterwards is
// theirs, and a podline restart must not undo it. fsGroupChangePolicy does
// not apply to emptyDir, as on other nodes: a new volume holds nothing
// whose ownership a policy could spare.
const (
	emptyDirMode fs.FileMode = 0o777
	// emptyDirMemMode is the tmpfs mount's mode= option.
	emptyDirMemMode uint32 = 0o1777
	// fsGroupWritable and fsGroupDirBits are what an fsGroup adds to
	// the root of a volume containers write.
	fsGroupWritable fs.FileMode = 0o660
	fsGroupDirBits  fs.FileMode = fs.ModeSetgid | 0o110
)

// emptyDirMarker is where the first setup of vol records that it is done:
// a file in the pod directory, outside the volume, as other nodes keep it.
func (s *VolumeStage) emptyDirMarker(pod *v1.Pod, vol *v1.Volume) string {
	return filepath.Join(s.Node.PodDir(pod.UID), "plugins", "kubernetes.io~empty-dir", vol.Name, "ready")
}

// setupEmptyDir makes the volume at path, mounts a tmpfs for medium
// Memory and, the first time, gives it to fsGroup (when not nil). The
// marker file says the first setup is done; a memory volume whose tmpfs is
// gone is new again.
func setupEmptyDir(path, marker string, src *v1.EmptyDirVolumeSource, fsGroup *int64) error {
	memory := src.Medium == v1.StorageMediumMemory
	if done, err := emptyDirReady(path, marker, memory); err != nil || done {
		return err
	}
	if err := os.MkdirAll(path, emptyDirMode); err != nil {
		return err
	}
	// Set, not left to MkdirAll: the umask narrows what it makes, and an
	// existing directory keeps whatever mode it had.
	if err := os.Chmod(path, emptyDirMode); err != nil {
		return err
	}
	if memory {
		var size int64
		if src.SizeLimit != nil {
			size = src.SizeLimit.Value()
		}
		if err := tmpfs.Ensure(path, emptyDirMemMode, size); err != nil {
			return err
		}
	}
	if fsGroup != nil {
		if err := giveToGroup(path, int(*fsGroup)); err != nil {
			return fmt.Errorf("fsGroup %d: %w", *fsGroup, err)
		}
	}
	if err := os.MkdirAll(filepath.Dir(marker), 0o750); err != nil {
		return err
	}
	return os.WriteFile(marker, nil, 0o640)
}

// emptyDirReady reports whether the volume's first setup is done and it
// is still there: on disk the directory, in memory its tmpfs.
func emptyDirReady(path, marker string, memory bool) (bool, error) {
	if _, err := os.Stat(marker); errors.Is(err, fs.ErrNotExist) {
		return false, nil
	} else if err != nil {
		return false, err
	}
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil || !fi.IsDir() {
		return false, err
	}
	if !memory {
		return true, nil
	}
	return tmpfs.IsMountPoint(path)
}

// giveToGroup gives the volume's root to group gid, as the table above
// says. It never walks what is inside: at a first setup the volume is new
// and empty, except one made before markers were written, which a
// running container may be changing. A walk by path through a tree a
// container can rename under it (a directory swapped for a symlink to
// /etc between the listing and the chmod) would chown and chmod host
// files as root. What containers make later joins the group through the
// root's setgid bit. The root itself is a directory of the pod that no
// container can replace: it is their mount point.
func giveToGroup(root string, gid int) error {
	fi, err := os.Lstat(root)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s is not a directory", root)
	}
	if err := os.Lchown(root, -1, gid); err != nil {
		return err
	}
	mode := (fi.Mode() | fsGroupWritable | fsGroupDirBits) & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky)
	// Set after the chown, which clears setgid.
	if err := os.Chmod(root, mode); err != nil {
		return err
	}
	if fi, err = os.Lstat(root); err != nil {
		return err
	}
	return fsgroup.CheckSetgid(root, mode, fi.Mode())
}

// fsGroupOf is the pod's fsGroup, or nil.
func fsGroupOf(pod *v1.Pod) *int64 {
	if sc := pod.Spec.SecurityContext; sc != nil {
		return sc.FSGroup
	}
	return nil
}
