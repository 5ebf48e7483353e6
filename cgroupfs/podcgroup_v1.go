package cgroupfs

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"strconv"
	"sync"

	"golang.org/x/sys/unix"
)

// A new pod cgroup on a v1 host is made by name under its QoS cgroup, held
// open in every hierarchy, and only the limits that differ from a new
// cgroup's defaults are written. The general path (cgroup1.New, then
// cgroup1.Load and Update) looks the whole path up again in every
// hierarchy for each stat, mkdir, read and write: at 10,000 pods that was
// half of what EnsurePod cost beside the kernel's own mkdir. A pod cgroup
// that already exists (a restart, a resize) takes the general path, so
// every limit is written as before.

// defaultShares is a new cgroup's cpu.shares: nothing to write when a pod
// asks for it. A new cgroup has no quota, no memory or pids limit and the
// period CFSPeriodUS.
const defaultShares = 1024

// qosDirs are a QoS cgroup's directories, one per v1 hierarchy, opened
// O_PATH: enough to make and open entries under them.
type qosDirs struct {
	fds []int // in treeV1.mounts order
}

func (q *qosDirs) close() {
	for _, fd := range q.fds {
		unix.Close(fd)
	}
}

// qosDirCache holds the open QoS cgroups by path (kubepods, burstable,
// besteffort: three at most).
type qosDirCache struct {
	mu   sync.Mutex
	dirs map[string]*qosDirs
}

func (c *qosDirCache) get(t *treeV1, dir string) (*qosDirs, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if q := c.dirs[dir]; q != nil {
		return q, nil
	}
	q := &qosDirs{}
	for _, m := range t.mounts {
		fd, err := unix.Open(filepath.Join(m.dir, dir), unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			q.close()
			return nil, &fs.PathError{Op: "open", Path: filepath.Join(m.dir, dir), Err: err}
		}
		q.fds = append(q.fds, fd)
	}
	if c.dirs == nil {
		c.dirs = map[string]*qosDirs{}
	}
	c.dirs[dir] = q
	return q, nil
}

// drop forgets q if it is still the one held for dir: its directories
// were removed (and maybe made again) behind the Tree's back.
func (c *qosDirCache) drop(dir string, q *qosDirs) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.dirs[dir] == q {
		delete(c.dirs, dir)
		q.close()
	}
}

// ensurePod makes pod cgroup dir with limits r. It reports handled false,
// having changed nothing, when the cgroup already exists in a hierarchy:
// the caller then takes the general path.
func (t *treeV1) ensurePod(dir string, r Resources) (handled bool, err error) {
	parent, name := path.Split(dir)
	parent = path.Clean(parent)
	for attempt := 0; ; attempt++ {
		q, err := t.qos.get(t, parent)
		if err != nil {
			return false, fmt.Errorf("parent of cgroup %s: %w", dir, err)
		}
		handled, err := t.makePod(q, dir, name, r)
		if !handled && errors.Is(err, unix.ENOENT) && attempt == 0 {
			// The QoS cgroup held open is gone; open it again once.
			t.qos.drop(parent, q)
			continue
		}
		return handled, err
	}
}

func (t *treeV1) makePod(q *qosDirs, dir, name string, r Resources) (bool, error) {
	if r.PidsLimit != nil && t.pids == "" {
		return false, nil // the general path says why it cannot
	}
	treeLock.Lock()
	made := 0
	var err error
	for i := range t.mounts {
		if err = unix.Mkdirat(q.fds[i], name, 0o755); err != nil {
			break
		}
		made++
	}
	treeLock.Unlock()
	if errors.Is(err, unix.EEXIST) && made == 0 {
		return false, nil
	}
	if err != nil {
		if made > 0 {
			// The cgroup is half made: the general path finishes it.
			return false, nil
		}
		// ENOENT: the caller opens the parent again.
		return false, fmt.Errorf("create cgroup %s in %s: %w", dir, t.mounts[0].dir, err)
	}
	// Made in every hierarchy. The cpuset one took cpus and mems from its
	// parent, whose cgroup.clone_children EnsureQOS turned on; only the
	// limits a new cgroup lacks are written, period before quota.
	for _, w := range t.podWrites(r) {
		if err := writeAt(q.fds[w.mount], name+"/"+w.file, w.value); err != nil {
			return true, fmt.Errorf("set limits of %s: %w", dir, err)
		}
	}
	return true, nil
}

type podWrite struct {
	mount       int // index into t.mounts
	file, value string
}

// podWrites lists what a new pod cgroup needs written for r.
func (t *treeV1) podWrites(r Resources) []podWrite {
	var out []podWrite
	add := func(has func(treeMount) bool, file string, v int64) {
		for i, m := range t.mounts {
			if has(m) {
				out = append(out, podWrite{i, file, strconv.FormatInt(v, 10)})
				return
			}
		}
	}
	isCPU := func(m treeMount) bool { return m.cpu }
	if r.CPUShares != nil && *r.CPUShares != defaultShares {
		add(isCPU, "cpu.shares", int64(*r.CPUShares))
	}
	if r.CPUQuota != nil && *r.CPUQuota > 0 {
		if r.CPUPeriod != nil && *r.CPUPeriod != CFSPeriodUS {
			add(isCPU, "cpu.cfs_period_us", int64(*r.CPUPeriod))
		}
		add(isCPU, "cpu.cfs_quota_us", *r.CPUQuota)
	} else if r.CPUPeriod != nil && *r.CPUPeriod != CFSPeriodUS {
		add(isCPU, "cpu.cfs_period_us", int64(*r.CPUPeriod))
	}
	if r.MemoryLimit != nil && *r.MemoryLimit >= 0 {
		add(func(m treeMount) bool { return m.memory }, "memory.limit_in_bytes", *r.MemoryLimit)
	}
	if r.PidsLimit != nil && *r.PidsLimit >= 0 {
		add(func(m treeMount) bool { return m.pids }, "pids.max", *r.PidsLimit)
	}
	return out
}

// writeAt writes value to file under directory fd dirfd.
func writeAt(dirfd int, file, value string) error {
	fd, err := unix.Openat(dirfd, file, unix.O_WRONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("open %s: %w", file, err)
	}
	defer unix.Close(fd)
	if _, err := unix.Write(fd, []byte(value)); err != nil {
		return fmt.Errorf("write %q to %s: %w", value, file, err)
	}
	return nil
}
