package cgroupfs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/containerd/cgroups/v3/cgroup1"
	specs "github.com/opencontainers/runtime-spec/specs-go"
)

// treeV1 keeps the tree on a cgroup v1 host. Every directory is made in
// every mounted v1 hierarchy, the named systemd one included: runc's
// cgroupfs driver puts each container into all of them under the
// CgroupParent it is given, so the pod cgroup exists wherever a
// container's does, and RemovePod finds it everywhere. The cgroup2 mount
// of a hybrid host is left alone: runc mirrors containers into it itself,
// and no controller is enabled there.
type treeV1 struct {
	mounts                    []treeMount
	cpu, memory, pids, cpuset string // mount points; "" when not mounted
	// all and owned are the hierarchies cgroup1 works on, found once:
	// cgroup1.Default reads the mount table on every call. owned, for
	// the cgroups podline owns, leaves out cpuset (see ensureCpuset).
	all, owned cgroup1.Hierarchy
	// qos holds the QoS cgroups open for ensurePod.
	qos qosDirCache
}

func newTreeV1(mounts []treeMount) (*treeV1, error) {
	t := &treeV1{mounts: mounts}
	for _, m := range mounts {
		set := func(dst *string, has bool) {
			if has && *dst == "" {
				*dst = m.dir
			}
		}
		set(&t.cpu, m.cpu)
		set(&t.memory, m.memory)
		set(&t.pids, m.pids)
		set(&t.cpuset, m.cpuset)
	}
	if t.cpu == "" || t.memory == "" {
		return nil, fmt.Errorf("cgroup v1: the cpu and memory controllers must be mounted (have %s)", t)
	}
	subs, err := cgroup1.Default()
	if err != nil {
		return nil, fmt.Errorf("cgroup v1 hierarchies: %w", err)
	}
	var owned []cgroup1.Subsystem
	for _, s := range subs {
		if s.Name() != cgroup1.Cpuset {
			owned = append(owned, s)
		}
	}
	t.all = func() ([]cgroup1.Subsystem, error) { return subs, nil }
	t.owned = func() ([]cgroup1.Subsystem, error) { return owned, nil }
	return t, nil
}

func (t *treeV1) String() string {
	var names []string
	for _, m := range t.mounts {
		names = append(names, strings.Join(m.options, ","))
	}
	return "v1[" + strings.Join(names, " ") + "]"
}

// ensureDir makes dir in every v1 hierarchy through containerd/cgroups'
// cgroup1, which also fills an empty cpuset from the parent (a v1 cpuset
// cgroup accepts no task until cpuset.cpus and cpuset.mems are set). It
// reports whether podline owns the cgroup: it made it now, or ours says so.
func (t *treeV1) ensureDir(dir string, ours bool) (bool, error) {
	// cgroup1 would make missing parents too; the tree's levels are made
	// in order, so a missing parent is a caller's mistake.
	if _, err := os.Stat(filepath.Join(t.memory, filepath.Dir(dir))); err != nil {
		return false, fmt.Errorf("parent of cgroup %s: %w", dir, err)
	}
	_, err := os.Stat(filepath.Join(t.memory, dir))
	existed := err == nil
	h := t.all
	if ours {
		h = t.owned
	}
	treeLock.Lock()
	defer treeLock.Unlock()
	if _, err := cgroup1.New(cgroup1.StaticPath(dir), &specs.LinuxResources{}, cgroup1.WithHiearchy(h)); err != nil {
		return false, fmt.Errorf("create cgroup %s: %w", dir, err)
	}
	if ours && t.cpuset != "" {
		if err := ensureCpuset(filepath.Join(t.cpuset, dir)); err != nil {
			return false, fmt.Errorf("create cgroup %s: %w", dir, err)
		}
	}
	return ours || !existed, nil
}

// ensureCpuset makes a cpuset cgroup podline owns and turns on its
// cgroup.clone_children, so the kernel copies cpus and mems into each new
// child (and the flag with it): a pod cgroup, and the runtime's container
// cgroups under it, are usable as made. Writing cpuset.cpus instead, as
// cgroup1 and runc do for an empty cpuset, makes the kernel check every
// sibling and rebuild its scheduling domains: at 2,000 pods that cost
// 12 ms per pod cgroup, growing with the pods. Only the first cgroup under
// a parent without the flag (kubepods) gets its values written.
func ensureCpuset(dir string) error {
	if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	for _, name := range []string{cpusetCpusFile, "cpuset.mems"} {
		v, err := readCgroupFile(dir, name)
		if err != nil {
			return err
		}
		if v != "" {
			continue
		}
		if name == cpusetCpusFile {
			if err := restoreBalance(dir); err != nil {
				return err
			}
		}
		if v, err = readCgroupFile(filepath.Dir(dir), name); err != nil {
			return err
		}
		if err := writeCgroupFile(dir, name, v); err != nil {
			return err
		}
	}
	v, err := readCgroupFile(dir, "cgroup.clone_children")
	if err != nil || v == "1" {
		return err
	}
	return writeCgroupFile(dir, "cgroup.clone_children", "1")
}

// restoreBalance turns load balancing back on in a cpuset without cpus:
// one a removal emptied (quiesceCpuset) and left, its pod come back. A new
// cpuset has it on already. It is done while the cpus are still empty, as
// the kernel then rebuilds no scheduling domain.
func restoreBalance(dir string) error {
	v, err := readCgroupFile(dir, cpusetBalanceFile)
	if err != nil || balancesLoad(v) {
		return err
	}
	return writeCgroupFile(dir, cpusetBalanceFile, "1")
}

// write sets the limits through cgroup1's controllers (the period is
// written before the quota, as the kernel checks a quota against it).
func (t *treeV1) write(dir string, r Resources) error {
	if r.PidsLimit != nil && t.pids == "" {
		return errors.New("pids limit: no v1 pids hierarchy mounted")
	}
	cg, err := cgroup1.Load(cgroup1.StaticPath(dir), cgroup1.WithHiearchy(t.owned))
	if err != nil {
		return fmt.Errorf("load cgroup %s: %w", dir, err)
	}
	if err := cg.Update(r.spec()); err != nil {
		return fmt.Errorf("set limits of %s: %w", dir, err)
	}
	// cgroup1 writes positive pid limits only; lifting one is ours to do.
	if r.PidsLimit != nil && *r.PidsLimit < 0 {
		return writeCgroupFile(filepath.Join(t.pids, dir), "pids.max", "max")
	}
	return nil
}

// spec converts to the OCI form cgroup1 takes; nil fields stay unwritten
// and a negative limit means none (-1 to the kernel).
func (r Resources) spec() *specs.LinuxResources {
	out := &specs.LinuxResources{}
	if r.CPUShares != nil || r.CPUQuota != nil || r.CPUPeriod != nil {
		out.CPU = &specs.LinuxCPU{Shares: r.CPUShares, Period: r.CPUPeriod}
		if r.CPUQuota != nil {
			q := max(*r.CPUQuota, -1)
			out.CPU.Quota = &q
		}
	}
	if r.MemoryLimit != nil {
		m := max(*r.MemoryLimit, -1)
		out.Memory = &specs.LinuxMemory{Limit: &m}
	}
	if r.PidsLimit != nil {
		p := max(*r.PidsLimit, -1)
		out.Pids = &specs.LinuxPids{Limit: &p}
	}
	return out
}

func (t *treeV1) read(dir string) (Resources, error) {
	var r Resources
	cpu := filepath.Join(t.cpu, dir)
	shares, err := readCgroupInt(cpu, "cpu.shares")
	if err != nil {
		return r, err
	}
	period, err := readCgroupInt(cpu, "cpu.cfs_period_us")
	if err != nil {
		return r, err
	}
	quota, err := readCgroupInt(cpu, "cpu.cfs_quota_us")
	if err != nil {
		return r, err
	}
	mem, err := readCgroupInt(filepath.Join(t.memory, dir), "memory.limit_in_bytes")
	if err != nil {
		return r, err
	}
	s, p := uint64(shares), uint64(period)
	r.CPUShares, r.CPUPeriod, r.CPUQuota, r.MemoryLimit = &s, &p, &quota, &mem
	if t.pids != "" {
		pids, err := readCgroupInt(filepath.Join(t.pids, dir), "pids.max")
		if err != nil {
			return r, err
		}
		r.PidsLimit = &pids
	}
	return r, nil
}
