package volumes

import (
	"fmt"
	"io/fs"
	"os"
	"syscall"

	v1 "k8s.io/api/core/v1"

	"github.com/podline/podline/internal/fsgroup"
)

// Modes and owners are the ones the kubelet gives these volumes, because
// images are built against them: a non-root process expects to read a
// 0644 configMap key, and token readers expect a 0600 token they own.
//
//	volume directory    0777 on disk (configMap, downwardAPI); the tmpfs
//	                    root's 1777 in memory (secret, projected)
//	data directories    0755: the timestamped one and any below it
//	files               the item's mode, else the volume's defaultMode,
//	                    else 0644; root's
//	token files         0600 and the pod's user's when every container
//	                    runs as one user or the pod has an fsGroup, else
//	                    like other files
//
// With an fsGroup, everything in the volume, symlinks included, belongs
// to that group; files gain group read and directories group read,
// search and setgid. Never group write: containers mount these volumes
// read-only. fsGroupChangePolicy does not apply to them (the kubelet
// ignores it for these types too): the files are podline's own and
// written whole, so there is no tree of user files to spare a walk of.
const (
	diskRootMode = 0o777
	dataDirMode  = 0o755
	// tokenMode keeps a token from other users once it has an owner or
	// a group that can read it.
	tokenMode       = 0o600
	fsGroupFileBits = 0o440
	fsGroupDirBits  = fs.ModeSetgid | 0o550
)

// fsGroup is the group that owns the pod's volume files, or -1.
func fsGroup(pod *v1.Pod) int {
	if sc := pod.Spec.SecurityContext; sc != nil && sc.FSGroup != nil {
		return int(*sc.FSGroup)
	}
	return -1
}

// tokenOwner is the user that owns the pod's token files: the one user
// every init and app container runs as, or -1 when they differ or one
// leaves it to its image. Ephemeral containers do not count: they come
// after the volume is written.
func tokenOwner(pod *v1.Pod) int {
	owner := -1
	for _, list := range [][]v1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range list {
			uid, ok := runAsUser(pod, &list[i])
			if !ok || (owner >= 0 && uid != owner) {
				return -1
			}
			owner = uid
		}
	}
	return owner
}

func runAsUser(pod *v1.Pod, c *v1.Container) (int, bool) {
	if sc := c.SecurityContext; sc != nil && sc.RunAsUser != nil {
		return int(*sc.RunAsUser), true
	}
	if sc := pod.Spec.SecurityContext; sc != nil && sc.RunAsUser != nil {
		return int(*sc.RunAsUser), true
	}
	return 0, false
}

// tokenFile is how a token lands in the volume: see the table above.
func tokenFile(pod *v1.Pod, token []byte, defaultMode *int32) file {
	owner := tokenOwner(pod)
	if owner < 0 && fsGroup(pod) < 0 {
		return file{data: token, mode: fileMode(nil, defaultMode)}
	}
	return file{data: token, mode: tokenMode, uid: max(owner, 0)}
}

// prepareDir makes dir ready for a volume's files. The volume stage may
// have made it narrower than the volume wants (and a umask narrows
// anything created here), so the disk mode is set, not assumed; a tmpfs
// gets its mode when mounted.
func prepareDir(dir string, inMemory bool) error {
	if err := os.MkdirAll(dir, diskRootMode); err != nil {
		return err
	}
	if inMemory {
		return ensureTmpfs(dir)
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return err
	}
	if fi.Mode().Perm() != diskRootMode {
		if err := os.Chmod(dir, diskRootMode); err != nil {
			return fmt.Errorf("chmod %s: %w", dir, err)
		}
	}
	return nil
}

// ownOpen sets an open file's mode and owners: uid when not root, the
// fsGroup when there is one. On the descriptor, not a path: the file a
// write just made is the one that changes, whatever is renamed meanwhile.
func (w writer) ownOpen(f *os.File, mode fs.FileMode, uid int) error {
	if uid == 0 {
		uid = -1
	}
	if uid >= 0 || w.gid >= 0 {
		if err := f.Chown(uid, w.gid); err != nil {
			return fmt.Errorf("chown %s: %w", f.Name(), err)
		}
	}
	// Set, not left to OpenFile or Mkdir: the umask narrows what they
	// create, and chown clears setgid.
	if err := f.Chmod(mode); err != nil {
		return fmt.Errorf("chmod %s: %w", f.Name(), err)
	}
	if mode&fs.ModeSetgid == 0 {
		return nil
	}
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	return fsgroup.CheckSetgid(f.Name(), mode, fi.Mode())
}

// ownDir sets the mode of a directory beneath root, and with an fsGroup
// its group and the bits that let the group reach every file, setgid
// among them.
func (w writer) ownDir(root *os.Root, name string, mode fs.FileMode) error {
	if w.gid >= 0 {
		mode |= fsGroupDirBits
	}
	d, err := root.OpenFile(name, os.O_RDONLY|syscall.O_DIRECTORY, 0)
	if err != nil {
		return err
	}
	defer d.Close()
	return w.ownOpen(d, mode, 0)
}

// ownRoot gives the volume directory itself to the fsGroup, keeping its
// mode (prepareDir's) and adding the group's bits. The directory is
// podline's (the pod directory's volumes/<plugin>/<name>), not the pod's.
func (w writer) ownRoot(dir string) error {
	if w.gid < 0 {
		return nil
	}
	d, err := os.OpenFile(dir, os.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return err
	}
	defer d.Close()
	fi, err := d.Stat()
	if err != nil {
		return err
	}
	mode := fi.Mode()&(fs.ModePerm|fs.ModeSticky) | fsGroupDirBits
	return w.ownOpen(d, mode, 0)
}

// ownLink gives a symlink beneath root to the fsGroup; its mode means
// nothing.
func (w writer) ownLink(root *os.Root, name string) error {
	if w.gid < 0 {
		return nil
	}
	if err := root.Lchown(name, -1, w.gid); err != nil {
		return fmt.Errorf("chown %s: %w", name, err)
	}
	return nil
}

// ownedAs reports whether an existing file has the owners f and w ask
// for.
func (w writer) ownedAs(fi fs.FileInfo, f file) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == f.uid && (w.gid < 0 || int(st.Gid) == w.gid)
}
