package kubelet

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
)

// mountinfo is where the cgroup hierarchies and the kubelet's mounts are
// found. A variable so tests can point it at a fixture.
var mountinfo = "/proc/self/mountinfo"

// mount is one line of mountinfo.
type mount struct {
	point  string
	fstype string
}

// mounts parses mountinfo: "id parent maj:min root point opts... - fstype
// source superopts", with spaces and such in paths escaped as \040.
func mounts() ([]mount, error) {
	f, err := os.Open(mountinfo)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []mount
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		sep := slices.Index(fields, "-")
		if sep < 5 || sep+1 >= len(fields) {
			continue
		}
		out = append(out, mount{point: unescape(fields[4]), fstype: fields[sep+1]})
	}
	return out, sc.Err()
}

// unescape undoes mountinfo's octal escapes (\040 for a space).
func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			var v byte
			ok := true
			for _, c := range []byte(s[i+1 : i+4]) {
				if c < '0' || c > '7' {
					ok = false
					break
				}
				v = v*8 + (c - '0')
			}
			if ok {
				b.WriteByte(v)
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// unmountUnder unmounts every mount at or below dir, deepest first. The
// kubelet bind-mounts its root dir onto itself to make it rshared, and
// volumes would be mounted below it.
func unmountUnder(dir string) error {
	ms, err := mounts()
	if err != nil {
		return fmt.Errorf("mounts: %w", err)
	}
	dir = filepath.Clean(dir)
	var points []string
	for _, m := range ms {
		if m.point == dir || strings.HasPrefix(m.point, dir+"/") {
			points = append(points, m.point)
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
