package stages

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/podline/podline/internal/mountinfo"
	"golang.org/x/sys/unix"
)

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
