// Package cgtree removes a benchmark agent's cgroup subtree from every
// mounted hierarchy once the agent and its pods are gone, so one case
// leaves nothing for the next. It removes only empty cgroups and never
// moves or kills a process.
package cgtree

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

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
		if err := os.Remove(d); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("cgtree: remove %s: %w", d, err)
		}
	}
	return nil
}
