package stages

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"

	"github.com/podline/podline/internal/mountinfo"
	"golang.org/x/sys/unix"
)

// unmountUnder unmounts every mount at or below dir, deepest first. Only
// podline's own volume mounts live under a pod directory, and a
// container's that propagated there. The mount table is the shared
// reading: a container's mount newer than it is found when the pod
// directory will not go and the retry reads the table again.
func unmountUnder(dir string) error {
	mounts, err := mountsUnder(dir)
	if err != nil {
		return err
	}
	if len(mounts) > 0 {
		defer mountinfo.Changed()
	}
	for _, m := range mounts {
		if err := unix.Unmount(m, 0); err != nil && err != unix.EINVAL && err != unix.ENOENT {
			return fmt.Errorf("unmount %s: %w", m, err)
		}
	}
	return nil
}

// mountsUnder lists the mount points at or below dir, deepest first. The
// mount table shows them absolute and with symlinks resolved, so dir is
// too: a --root-dir given relative or through a symlink would match
// nothing and leave the pod's mounts behind.
func mountsUnder(dir string) ([]string, error) {
	dir, err := filepath.EvalSymlinks(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if dir, err = filepath.Abs(dir); err != nil {
		return nil, err
	}
	entries, err := mountinfo.ReadShared()
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		if e.Dir == dir || strings.HasPrefix(e.Dir, dir+"/") {
			out = append(out, e.Dir)
		}
	}
	sort.Slice(out, func(i, j int) bool { return len(out[i]) > len(out[j]) })
	return out, nil
}
