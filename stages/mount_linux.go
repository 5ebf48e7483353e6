package stages

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/podline/podline/internal/mountinfo"
	"golang.org/x/sys/unix"
)

// mountTmpfs mounts a tmpfs at path unless one is already there, so a
// repeated setup after a podline restart does not stack mounts.
func mountTmpfs(path string, sizeBytes int64) error {
	if mounted, err := isMountPoint(path); err != nil || mounted {
		return err
	}
	opts := "mode=0777"
	if sizeBytes > 0 {
		opts += fmt.Sprintf(",size=%d", sizeBytes)
	}
	if err := unix.Mount("tmpfs", path, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, opts); err != nil {
		return fmt.Errorf("mount tmpfs at %s: %w", path, err)
	}
	return nil
}

// isMountPoint reports whether path is on another device than its parent.
func isMountPoint(path string) (bool, error) {
	var st, parent unix.Stat_t
	if err := unix.Lstat(path, &st); err != nil {
		return false, err
	}
	if err := unix.Lstat(filepath.Dir(path), &parent); err != nil {
		return false, err
	}
	return st.Dev != parent.Dev, nil
}

// unmountUnder unmounts every mount at or below dir, deepest first. Only
// podline's own volume mounts live under a pod directory.
func unmountUnder(dir string) error {
	mounts, err := mountsUnder(dir)
	if err != nil {
		return err
	}
	for _, m := range mounts {
		if err := unix.Unmount(m, 0); err != nil && err != unix.EINVAL && err != unix.ENOENT {
			return fmt.Errorf("unmount %s: %w", m, err)
		}
	}
	return nil
}

func mountsUnder(dir string) ([]string, error) {
	entries, err := mountinfo.Read()
	if err != nil {
		return nil, err
	}
	dir = filepath.Clean(dir)
	var out []string
	for _, e := range entries {
		if e.Dir == dir || strings.HasPrefix(e.Dir, dir+"/") {
			out = append(out, e.Dir)
		}
	}
	sort.Slice(out, func(i, j int) bool { return len(out[i]) > len(out[j]) })
	return out, nil
}
