package cgroupfs

import (
	"slices"

	"github.com/podline/podline/internal/mountinfo"
)

// mount is one cgroup or cgroup2 mount from /proc/self/mountinfo. Every
// part of the package that needs to know where hierarchies live (the tree,
// the stats reader, the notifier, pod cgroup removal) reads this one list.
type mount struct {
	dev     string   // major:minor, the same for every mount of one hierarchy
	root    string   // the mount's root within its hierarchy ("/" for all of it)
	dir     string   // mount point
	v2      bool     // cgroup2
	options []string // superblock options: controllers, "name=systemd", rw, ...
}

func (m mount) has(opt string) bool { return slices.Contains(m.options, opt) }

// readMounts reads this process's cgroup mounts.
func readMounts() ([]mount, error) {
	entries, err := mountinfo.Read()
	if err != nil {
		return nil, err
	}
	return cgroupMounts(entries), nil
}

// parseMounts picks the cgroup and cgroup2 mounts out of mountinfo text,
// in order.
func parseMounts(data []byte) []mount { return cgroupMounts(mountinfo.Parse(data)) }

func cgroupMounts(entries []mountinfo.Entry) []mount {
	var out []mount
	for _, e := range entries {
		if e.FSType == "cgroup" || e.FSType == "cgroup2" {
			out = append(out, mount{dev: e.Dev, root: e.Root, dir: e.Dir, v2: e.FSType == "cgroup2", options: e.Options})
		}
	}
	return out
}

// UnifiedMount returns the first cgroup2 mount point ("" if there is none):
// /sys/fs/cgroup on a unified host, /sys/fs/cgroup/unified on a hybrid one.
func UnifiedMount() string {
	mounts, _ := readMounts()
	for _, m := range mounts {
		if m.v2 {
			return m.dir
		}
	}
	return ""
}

// unescapeMountinfo undoes mountinfo's octal escapes.
func unescapeMountinfo(s string) string { return mountinfo.Unescape(s) }
