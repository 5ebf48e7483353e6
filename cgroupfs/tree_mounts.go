package cgroupfs

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// treeMount is one mounted cgroup v1 hierarchy and the controllers of it
// the Tree writes.
type treeMount struct {
	dir     string   // mount point
	options []string // controllers, and "name=systemd" for a named one
	cpu     bool
	memory  bool
	pids    bool
	cpuset  bool
}

// treeMounts are the cgroup mounts the Tree uses.
type treeMounts struct {
	v1      []treeMount // each v1 hierarchy once
	cgroup2 string      // first cgroup2 mount point
}

func readTreeMounts() (treeMounts, error) {
	mounts, err := readMounts()
	if err != nil {
		return treeMounts{}, err
	}
	return treeMountsOf(mounts), nil
}

// treeMountsOf picks the Tree's mounts. A v1 hierarchy mounted twice
// (same device) counts once; a bind mount of a sub-directory of a
// hierarchy is skipped, since paths under it are not relative to the
// hierarchy's root.
func treeMountsOf(mounts []mount) treeMounts {
	var m treeMounts
	seen := map[string]bool{}
	for _, mt := range mounts {
		if mt.v2 {
			if m.cgroup2 == "" {
				m.cgroup2 = mt.dir
			}
			continue
		}
		if mt.root != "/" || seen[mt.dev] {
			continue
		}
		seen[mt.dev] = true
		tm := treeMount{dir: mt.dir}
		for _, opt := range mt.options {
			switch opt {
			case "rw", "ro", "noprefix", "clone_children", "xattr", "cpuset_v2_mode", "favordynmods":
				continue
			case "cpu":
				tm.cpu = true
			case "memory":
				tm.memory = true
			case "pids":
				tm.pids = true
			case "cpuset":
				tm.cpuset = true
			}
			if strings.HasPrefix(opt, "release_agent=") {
				continue
			}
			tm.options = append(tm.options, opt)
		}
		m.v1 = append(m.v1, tm)
	}
	return m
}

// writeCgroupFile writes one value to a cgroup interface file.
func writeCgroupFile(dir, name, value string) error {
	file := filepath.Join(dir, name)
	if err := os.WriteFile(file, []byte(value), 0o644); err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return fmt.Errorf("write %q to %s: %w", value, file, err)
	}
	return nil
}

// readCgroupFile reads a one-line cgroup interface file, without its
// newline.
func readCgroupFile(dir, name string) (string, error) {
	data, err := os.ReadFile(filepath.Join(dir, name))
	return string(bytes.TrimSpace(data)), err
}

// readCgroupInt reads a one-number file; "max", and v1's "unlimited"
// numbers of 2^62 and above, read as -1.
func readCgroupInt(dir, name string) (int64, error) {
	s, err := readCgroupFile(dir, name)
	if err != nil {
		return 0, err
	}
	if s == "max" {
		return -1, nil
	}
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		// cpu.cfs_quota_us reads -1 when unlimited.
		n, err2 := strconv.ParseInt(s, 10, 64)
		if err2 != nil {
			return 0, fmt.Errorf("parse %s: %w", filepath.Join(dir, name), err)
		}
		return n, nil
	}
	if v >= 1<<62 {
		return -1, nil
	}
	return int64(v), nil
}

// limitValue renders a limit for writing; a negative one is "no limit",
// which v1's memory and cpu files take as -1 and pids and v2 as max.
func limitValue(v int64, unlimited string) string {
	if v < 0 {
		return unlimited
	}
	return strconv.FormatInt(v, 10)
}
