package kubelet

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/podline/podline/internal/mountinfo"
)

// unmountUnder unmounts every mount at or below dir, deepest first. The
// kubelet bind-mounts its root dir onto itself to make it rshared, and
// volumes would be mounted below it.
func unmountUnder(dir string) error {
	ms, err := mountinfo.Read()
	if err != nil {
		return fmt.Errorf("mounts: %w", err)
	}
	dir = filepath.Clean(dir)
	var points []string
	for _, m := range ms {
		if m.Dir == dir || strings.HasPrefix(m.Dir, dir+"/") {
			points = append(points, m.Dir)
		}
	}
	// Longest first: children before parents. A path mounted twice shows
	// twice and is unmounted twice, top of the stack first.
	slices.SortStableFunc(points, func(a, b string) int { return len(b) - len(a) })
	var errs []error
	for _, p := range points {
		if err := syscall.Unmount(p, 0); err != nil && !errors.Is(err, syscall.EINVAL) {
			// Busy: detach now, the kernel finishes when it is free.
			if err := syscall.Unmount(p, syscall.MNT_DETACH); err != nil && !errors.Is(err, syscall.EINVAL) {
				errs = append(errs, fmt.Errorf("unmount %s: %w", p, err))
			}
		}
	}
	return errors.Join(errs...)
}
