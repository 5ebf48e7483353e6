package cgroupfs

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/containerd/cgroups/v3/cgroup2"
)

// ErrNotDelegated means a cgroup2 parent podline does not own has not
// enabled the cpu and memory controllers for its children: podline does
// not enable them in someone else's cgroup.
var ErrNotDelegated = errors.New("cgroup2 controllers not enabled for podline's cgroups")

// treeV2Controllers are enabled for the children of podline's cgroups, as
// far as the parent has them: runc puts container limits in them.
var treeV2Controllers = []string{"cpuset", "cpu", "io", "memory", "hugetlb", "pids"}

// treeV2 keeps the tree on a unified cgroup2 host. A cgroup's controllers
// come from its parent's cgroup.subtree_control, so every cgroup podline
// owns enables for its children what its own parent enabled for it. A
// parent podline does not own (the mount root, an existing --cgroup-root)
// is only read: it must already enable cpu and memory.
type treeV2 struct {
	mount string
}

func newTreeV2(mount string) (*treeV2, error) {
	if mount == "" {
		return nil, errors.New("unified cgroup mode but no cgroup2 mount")
	}
	return &treeV2{mount: mount}, nil
}

func (t *treeV2) String() string { return "v2[" + t.mount + "]" }

func (t *treeV2) ensureDir(dir string, ours bool) (bool, error) {
	full := filepath.Join(t.mount, dir)
	parent := filepath.Dir(full)
	enabled, err := readSubtreeControl(parent)
	if err != nil {
		return false, err
	}
	if !slices.Contains(enabled, "cpu") || !slices.Contains(enabled, "memory") {
		return false, fmt.Errorf("%s enables %q; add +cpu +memory there: %w",
			filepath.Join(parent, "cgroup.subtree_control"), enabled, ErrNotDelegated)
	}
	treeLock.Lock()
	err = os.Mkdir(full, 0o755)
	treeLock.Unlock()
	if err != nil && !errors.Is(err, fs.ErrExist) {
		return false, fmt.Errorf("create cgroup: %w", err)
	}
	owned := ours || err == nil
	if !owned {
		return false, nil
	}
	var plus []string
	for _, c := range treeV2Controllers {
		if slices.Contains(enabled, c) {
			plus = append(plus, "+"+c)
		}
	}
	return true, writeCgroupFile(full, "cgroup.subtree_control", strings.Join(plus, " "))
}

// readSubtreeControl lists the controllers a cgroup enables for its
// children.
func readSubtreeControl(dir string) ([]string, error) {
	s, err := readCgroupFile(dir, "cgroup.subtree_control")
	if err != nil {
		return nil, err
	}
	names := strings.Fields(s)
	for i, n := range names {
		names[i] = strings.TrimPrefix(n, "+")
	}
	return names, nil
}

// write sets the limits through containerd/cgroups' cgroup2 Manager.
// Load (unlike NewManager) touches no ancestor: the controllers were
// enabled by ensureDir, in cgroups podline owns only.
func (t *treeV2) write(dir string, r Resources) error {
	m, err := cgroup2.Load(dir, cgroup2.WithMountpoint(t.mount))
	if err != nil {
		return fmt.Errorf("load cgroup %s: %w", dir, err)
	}
	res := &cgroup2.Resources{}
	if r.CPUShares != nil || r.CPUQuota != nil || r.CPUPeriod != nil {
		res.CPU = &cgroup2.CPU{}
		if r.CPUShares != nil {
			w := SharesToWeight(*r.CPUShares)
			res.CPU.Weight = &w
		}
		if r.CPUQuota != nil || r.CPUPeriod != nil {
			quota := r.CPUQuota
			if quota == nil {
				// A period alone keeps the quota in place.
				cur, err := readCgroupFile(filepath.Join(t.mount, dir), "cpu.max")
				if err != nil {
					return err
				}
				if q, err := strconv.ParseInt(strings.Fields(cur + " max")[0], 10, 64); err == nil {
					quota = &q
				}
			}
			if quota != nil && *quota < 0 {
				quota = nil // "max"
			}
			res.CPU.Max = cgroup2.NewCPUMax(quota, r.CPUPeriod)
		}
	}
	if r.MemoryLimit != nil {
		// memory.max takes "max" or bytes; the largest number reads as max.
		m := *r.MemoryLimit
		if m < 0 {
			m = math.MaxInt64
		}
		res.Memory = &cgroup2.Memory{Max: &m}
	}
	if r.PidsLimit != nil {
		// The library writes "max" for a negative limit.
		res.Pids = &cgroup2.Pids{Max: *r.PidsLimit}
	}
	if err := m.Update(res); err != nil {
		return fmt.Errorf("set limits of %s: %w", dir, err)
	}
	return nil
}

func (t *treeV2) read(dir string) (Resources, error) {
	var r Resources
	full := filepath.Join(t.mount, dir)
	weight, err := readCgroupInt(full, "cpu.weight")
	if err != nil {
		return r, err
	}
	cpuMax, err := readCgroupFile(full, "cpu.max")
	if err != nil {
		return r, err
	}
	q, p, _ := strings.Cut(cpuMax, " ")
	quota := int64(-1)
	if q != "max" {
		if quota, err = strconv.ParseInt(q, 10, 64); err != nil {
			return r, fmt.Errorf("parse %s/cpu.max %q: %w", full, cpuMax, err)
		}
	}
	period, err := strconv.ParseUint(p, 10, 64)
	if err != nil {
		return r, fmt.Errorf("parse %s/cpu.max %q: %w", full, cpuMax, err)
	}
	mem, err := readCgroupInt(full, "memory.max")
	if err != nil {
		return r, err
	}
	shares := weightToShares(uint64(weight))
	r.CPUShares, r.CPUQuota, r.CPUPeriod, r.MemoryLimit = &shares, &quota, &period, &mem
	if pids, err := readCgroupInt(full, "pids.max"); err == nil {
		r.PidsLimit = &pids
	} else if !errors.Is(err, fs.ErrNotExist) {
		return r, err
	}
	return r, nil
}
