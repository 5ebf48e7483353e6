package kubelet

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
)

// cgroupDirs returns root's directory in every cgroup hierarchy: each v1
// controller's mount and the unified one, where runc mirrors v1 paths on a
// hybrid host.
func cgroupDirs(root string) ([]string, error) {
	ms, err := mounts()
	if err != nil {
		return nil, fmt.Errorf("cgroup mounts: %w", err)
	}
	var dirs []string
	for _, m := range ms {
		if m.fstype == "cgroup" || m.fstype == "cgroup2" {
			dirs = append(dirs, filepath.Join(m.point, root))
		}
	}
	if len(dirs) == 0 {
		return nil, errors.New("no cgroup hierarchy is mounted")
	}
	return dirs, nil
}

// createCgroups makes root in every hierarchy, as the kubelet requires of
// its cgroup root.
func createCgroups(root string) error {
	dirs, err := cgroupDirs(root)
	if err != nil {
		return err
	}
	for _, d := range dirs {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return fmt.Errorf("create kubelet cgroup root: %w", err)
		}
		// A new v1 cpuset starts with no CPUs and no memory nodes, and
		// nothing can join it or its children until they are set.
		if err := inheritCpuset(d); err != nil {
			return err
		}
	}
	return nil
}

// inheritCpuset copies cpuset.cpus and cpuset.mems from the parent into
// dir when dir is a v1 cpuset cgroup with them empty.
func inheritCpuset(dir string) error {
	for _, name := range []string{"cpuset.cpus", "cpuset.mems"} {
		cur, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return nil // not a v1 cpuset hierarchy
		}
		if strings.TrimSpace(string(cur)) != "" {
			continue
		}
		parent, err := os.ReadFile(filepath.Join(filepath.Dir(dir), name))
		if err != nil {
			return fmt.Errorf("cpuset of %s: %w", filepath.Dir(dir), err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), parent, 0); err != nil {
			return fmt.Errorf("cpuset of %s: %w", dir, err)
		}
	}
	return nil
}

// removeCgroups removes root and every cgroup below it in every hierarchy,
// deepest first. A cgroup still holding a process cannot go; after a short
// retry (a process may still be exiting) that is an error.
func removeCgroups(root string) error {
	dirs, err := cgroupDirs(root)
	if err != nil {
		return err
	}
	var errs []error
	for _, d := range dirs {
		if err := removeTree(d); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// removeTree rmdirs dir and its subdirectories bottom-up. Only directories
// are removed: a cgroup's files vanish with it.
func removeTree(dir string) error {
	var tree []string
	err := filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if e.IsDir() {
			tree = append(tree, p)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("walk cgroup %s: %w", dir, err)
	}
	slices.Reverse(tree) // WalkDir visits parents before children
	for _, d := range tree {
		if err := rmdirRetry(d); err != nil {
			return fmt.Errorf("remove cgroup %s: %w", d, err)
		}
	}
	return nil
}

func rmdirRetry(dir string) error {
	var err error
	for range 20 {
		err = syscall.Rmdir(dir)
		if err == nil || errors.Is(err, syscall.ENOENT) {
			return nil
		}
		if !errors.Is(err, syscall.EBUSY) {
			return err
		}
		time.Sleep(50 * time.Millisecond)
	}
	return err
}
