// Package cgtree makes a benchmark agent's cgroup root in every mounted
// hierarchy and removes the subtree once the agent and its pods are gone,
// so one case leaves nothing for the next. It removes only empty cgroups
// and never moves or kills a process.
package cgtree

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/podline/podline/internal/mountinfo"
)

// Remove deletes root (a cgroup path such as /podline-bench) and every
// cgroup under it in each cgroup hierarchy mounted on this host, deepest
// first. A hierarchy without root is skipped. The first cgroup that cannot
// be removed (one still holding a process, say) is reported with its path.
func Remove(root string) error {
	root = filepath.Clean("/" + root)
	if root == "/" {
		return errors.New("cgtree: refusing to remove the root cgroup")
	}
	mounts, err := hierarchies()
	if err != nil {
		return err
	}
	var firstErr error
	for _, m := range mounts {
		if err := removeUnder(filepath.Join(m, root)); err != nil && firstErr == nil {
			firstErr = err
		}
	}
	return firstErr
}

// Create makes root in every hierarchy, as an agent requires of its
// cgroup root; a new v1 cpuset gets its parent's cpus and mems, without
// which nothing could join it or its children.
func Create(root string) error {
	mounts, err := hierarchies()
	if err != nil {
		return err
	}
	for _, m := range mounts {
		d := filepath.Join(m, filepath.Clean("/"+root))
		if err := os.MkdirAll(d, 0o755); err != nil {
			return fmt.Errorf("cgtree: %w", err)
		}
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
			return fmt.Errorf("cgtree: cpuset of %s: %w", filepath.Dir(dir), err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), parent, 0); err != nil {
			return fmt.Errorf("cgtree: cpuset of %s: %w", dir, err)
		}
	}
	return nil
}

// hierarchies are the mount points of every cgroup (v1) and cgroup2 mount.
func hierarchies() ([]string, error) {
	all, err := mountinfo.Read()
	if err != nil {
		return nil, fmt.Errorf("cgtree: %w", err)
	}
	seen := map[string]bool{}
	var out []string
	for _, m := range all {
		if (m.FSType == "cgroup" || m.FSType == "cgroup2") && !seen[m.Dir] {
			seen[m.Dir] = true
			out = append(out, m.Dir)
		}
	}
	return out, nil
}

func removeUnder(dir string) error {
	var dirs []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if d.IsDir() {
			dirs = append(dirs, path)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("cgtree: walk %s: %w", dir, err)
	}
	// Deepest first: a cgroup goes only once its children have.
	sort.Slice(dirs, func(i, j int) bool {
		return strings.Count(dirs[i], "/") > strings.Count(dirs[j], "/")
	})
	for _, d := range dirs {
		if err := rmdir(d); err != nil {
			return fmt.Errorf("cgtree: remove %s: %w", d, err)
		}
	}
	return nil
}

// rmdir removes one cgroup, waiting up to a second while the kernel still
// counts a process that is exiting (EBUSY).
func rmdir(dir string) error {
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
