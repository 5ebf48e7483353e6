// Package cgroupfstest writes fixture cgroup trees that cgroupfs.Reader
// reads, for the tests and benchmarks of packages that consume cgroup
// stats (a 1,000-pod tree in a temporary directory takes a few hundred
// milliseconds). It writes only under the root it is given, never to a
// real cgroup filesystem.
package cgroupfstest

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/podline/podline/cgroupfs"
)

// v1Unlimited is what a v1 memory.limit_in_bytes reads with no limit set
// (LONG_MAX rounded down to a 4 KiB page).
const v1Unlimited = 9223372036854771712

// WriteV1 writes the v1 files of the cgroup at path (relative to the
// hierarchy roots) under root/cpuacct, root/memory and root/pids, the
// layout of cgroupfs.NewReaderAt(false, root). Only the groups whose Has*
// is set are written, so a false one is a controller without the cgroup.
// memory.stat gets the inactive file cache that gives s.MemoryWorkingSet,
// which must not exceed s.MemoryUsage; a zero MemoryLimit is unlimited.
func WriteV1(root, path string, s cgroupfs.Stats) error {
	if s.HasCPU {
		dir := filepath.Join(root, "cpuacct", path)
		if err := writeFiles(dir, "cpuacct.usage", fmt.Sprintf("%d\n", s.CPUUsageNanos)); err != nil {
			return err
		}
	}
	if s.HasMemory {
		inactive, err := inactiveFile(s)
		if err != nil {
			return err
		}
		limit := s.MemoryLimit
		if limit == 0 {
			limit = v1Unlimited
		}
		dir := filepath.Join(root, "memory", path)
		if err := writeFiles(dir,
			"memory.usage_in_bytes", fmt.Sprintf("%d\n", s.MemoryUsage),
			"memory.limit_in_bytes", fmt.Sprintf("%d\n", limit),
			"memory.stat", memoryStatV1(s, inactive, limit),
		); err != nil {
			return err
		}
	}
	if s.HasPids {
		dir := filepath.Join(root, "pids", path)
		if err := writeFiles(dir, "pids.current", fmt.Sprintf("%d\n", s.Pids)); err != nil {
			return err
		}
	}
	return nil
}

// WriteV2 writes the cgroup2 files of the cgroup at path under root, the
// layout of cgroupfs.NewReaderAt(true, root). Groups whose Has* is false
// are left out, as with a controller not enabled for the cgroup; the
// directory is always made. cpu.stat holds microseconds, so
// CPUUsageNanos reads back truncated to a microsecond.
func WriteV2(root, path string, s cgroupfs.Stats) error {
	dir := filepath.Join(root, path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("write fixture cgroup: %w", err)
	}
	if s.HasCPU {
		usec := s.CPUUsageNanos / 1000
		cpuStat := fmt.Sprintf("usage_usec %d\nuser_usec %d\nsystem_usec %d\nnice_usec 0\n"+
			"core_sched.force_idle_usec 0\nnr_periods 0\nnr_throttled 0\nthrottled_usec 0\nnr_bursts 0\nburst_usec 0\n",
			usec, usec/4*3, usec-usec/4*3)
		if err := writeFiles(dir, "cpu.stat", cpuStat); err != nil {
			return err
		}
	}
	if s.HasMemory {
		inactive, err := inactiveFile(s)
		if err != nil {
			return err
		}
		limit := "max\n"
		if s.MemoryLimit != 0 {
			limit = fmt.Sprintf("%d\n", s.MemoryLimit)
		}
		if err := writeFiles(dir,
			"memory.current", fmt.Sprintf("%d\n", s.MemoryUsage),
			"memory.max", limit,
			"memory.stat", memoryStatV2(s, inactive),
		); err != nil {
			return err
		}
	}
	if s.HasPids {
		if err := writeFiles(dir, "pids.current", fmt.Sprintf("%d\n", s.Pids)); err != nil {
			return err
		}
	}
	return nil
}

func inactiveFile(s cgroupfs.Stats) (uint64, error) {
	if s.MemoryWorkingSet > s.MemoryUsage {
		return 0, fmt.Errorf("write fixture cgroup: working set %d exceeds usage %d", s.MemoryWorkingSet, s.MemoryUsage)
	}
	return s.MemoryUsage - s.MemoryWorkingSet, nil
}

// writeFiles makes dir and writes name, content pairs in it.
func writeFiles(dir string, nameContent ...string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("write fixture cgroup: %w", err)
	}
	for i := 0; i+1 < len(nameContent); i += 2 {
		if err := os.WriteFile(filepath.Join(dir, nameContent[i]), []byte(nameContent[i+1]), 0o644); err != nil {
			return fmt.Errorf("write fixture cgroup: %w", err)
		}
	}
	return nil
}
