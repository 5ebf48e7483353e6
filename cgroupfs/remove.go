package cgroupfs

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/podline/podline/internal/poduid"
)

// Hierarchies are the mount points of every cgroup hierarchy on the host:
// one cgroup2 mount on a unified host, one per controller (plus the unified
// mirror) on a hybrid v1 host such as this project's test machines.
type Hierarchies []string

// FindHierarchies reads the cgroup mounts from /proc/self/mountinfo.
func FindHierarchies() (Hierarchies, error) {
	mounts, err := readMounts()
	if err != nil {
		return nil, err
	}
	return hierarchiesOf(mounts), nil
}

// hierarchiesOf lists each mount point once.
func hierarchiesOf(mounts []mount) Hierarchies {
	var out Hierarchies
	for _, m := range mounts {
		if !slices.Contains(out, m.dir) {
			out = append(out, m.dir)
		}
	}
	return out
}

// ErrBusy means a pod cgroup still holds processes; retry once they exit.
var ErrBusy = errors.New("cgroup still in use")

// RemovePod removes a pod cgroup (and any leftover child cgroups the
// runtime made inside it) from every hierarchy. parent is what
// Layout.PodParent returned. It refuses paths that are not pod cgroups
// under kubepods, so a bad argument can never remove someone else's cgroup.
func (h Hierarchies) RemovePod(parent string) error {
	if parent == "" {
		return nil
	}
	if !isPodCgroup(parent) {
		return fmt.Errorf("refusing to remove %q: not a pod cgroup under %s", parent, KubepodsName)
	}
	treeLock.Lock()
	defer treeLock.Unlock()
	var errs []error
	for _, mnt := range h {
		var prep func(dir string)
		if isCpusetV1(mnt) {
			prep = func(dir string) { quiesceCpuset(mnt, dir) }
		}
		if err := removeTreePrepared(filepath.Join(mnt, parent), prep); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// isPodCgroup accepts what PodParent makes under any cgroup root, with
// either driver: .../kubepods[/burstable|/besteffort]/pod<uid> with a
// valid UID, or a pod slice where systemd places it
// (isSystemdPodCgroup); written clean, since cleaning "pod<a>/../pod<b>"
// would reach another pod.
func isPodCgroup(parent string) bool {
	if !filepath.IsAbs(parent) || filepath.Clean(parent) != parent {
		return false
	}
	if strings.HasSuffix(parent, sliceSuffix) && isSystemdPodCgroup(parent) {
		return true
	}
	elems := strings.Split(parent, "/")
	base := elems[len(elems)-1]
	if !strings.HasPrefix(base, "pod") || !poduid.Valid(strings.TrimPrefix(base, "pod")) {
		return false
	}
	up := elems[:len(elems)-1]
	if n := len(up); n >= 2 && (up[n-1] == burstableName || up[n-1] == besteffortName) && up[n-2] == KubepodsName {
		return true
	}
	return len(up) >= 1 && up[len(up)-1] == KubepodsName
}

// removeTree rmdirs dir and its subdirectories, deepest first. cgroup
// directories cannot be removed recursively in one call; their files
// vanish with the directory. Most pod cgroups have no child left by the
// time the pod is removed (the runtime removed its containers'), so one
// rmdir is tried first: walking the directory costs five more system
// calls in each of a v1 host's dozen hierarchies, per pod.
func removeTree(dir string) error { return removeTreePrepared(dir, nil) }

// removeTreePrepared is removeTree calling prep, if not nil, on each
// directory just before its rmdir (see quiesceCpuset).
func removeTreePrepared(dir string, prep func(dir string)) error {
	if prep != nil {
		prep(dir)
	}
	switch err := syscall.Rmdir(dir); err {
	case nil, syscall.ENOENT:
		return nil
	case syscall.EBUSY, syscall.ENOTEMPTY, syscall.EEXIST:
		// Children (a cgroup answers EBUSY for them and for processes
		// alike; other file systems ENOTEMPTY): remove those first.
	default:
		return fmt.Errorf("remove cgroup %s: %w", dir, err)
	}
	var dirs []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			dirs = append(dirs, p)
		}
		return nil
	})
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	for i := len(dirs) - 1; i >= 0; i-- {
		if prep != nil {
			// dir again too: its children made it refuse the first time.
			prep(dirs[i])
		}
		if err := syscall.Rmdir(dirs[i]); err != nil && err != syscall.ENOENT {
			if err == syscall.EBUSY {
				return fmt.Errorf("remove cgroup %s: %w", dirs[i], ErrBusy)
			}
			return fmt.Errorf("remove cgroup %s: %w", dirs[i], err)
		}
	}
	return nil
}
