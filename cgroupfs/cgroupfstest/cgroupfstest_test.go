package cgroupfstest

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/podline/podline/cgroupfs"
)

func TestWriteReadBack(t *testing.T) {
	f := func(unified bool, s cgroupfs.Stats) {
		t.Helper()
		root := TempDir(t)
		write := WriteV1
		if unified {
			write = WriteV2
		}
		const path = "/kubepods/besteffort/pod1/ctr1"
		if err := write(root, path, s); err != nil {
			t.Fatal(err)
		}
		got, err := cgroupfs.NewReaderAt(unified, root).Read(path)
		if err != nil {
			t.Fatalf("unified=%v: %v", unified, err)
		}
		if time.Since(got.Time) > time.Minute {
			t.Errorf("Time = %v", got.Time)
		}
		got.Time = time.Time{}
		if got != s {
			t.Errorf("unified=%v:\n got %+v\nwant %+v", unified, got, s)
		}
	}
	full := cgroupfs.Stats{
		CPUUsageNanos: 98765432000, MemoryUsage: 300 << 20, MemoryWorkingSet: 200 << 20, MemoryRSS: 150 << 20,
		MemoryCache: 140 << 20, PageFaults: 123456, MajorPageFaults: 78, MemoryLimit: 512 << 20, Pids: 17,
		HasCPU: true, HasMemory: true, HasPids: true,
	}
	for _, unified := range []bool{false, true} {
		f(unified, full)
		unlimited := full
		unlimited.MemoryLimit = 0
		f(unified, unlimited)
		noPids := full
		noPids.Pids, noPids.HasPids = 0, false
		f(unified, noPids)
		cpuOnly := cgroupfs.Stats{CPUUsageNanos: 5000, HasCPU: true}
		f(unified, cpuOnly)
	}
}

// WriteV1 writes the v1 layout NewReaderAt expects, one directory per
// controller, and nothing for a group left out.
func TestWriteV1Layout(t *testing.T) {
	root := TempDir(t)
	if err := WriteV1(root, "/a/b", cgroupfs.Stats{HasCPU: true, HasMemory: true}); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"cpuacct/a/b/cpuacct.usage", "memory/a/b/memory.stat", "memory/a/b/memory.usage_in_bytes", "memory/a/b/memory.limit_in_bytes"} {
		if _, err := os.Stat(filepath.Join(root, p)); err != nil {
			t.Error(err)
		}
	}
	if _, err := os.Stat(filepath.Join(root, "pids")); !os.IsNotExist(err) {
		t.Errorf("pids written without HasPids: %v", err)
	}
}

func TestWriteRejectsWorkingSetAboveUsage(t *testing.T) {
	s := cgroupfs.Stats{MemoryUsage: 1, MemoryWorkingSet: 2, HasMemory: true}
	if err := WriteV1(t.TempDir(), "/x", s); err == nil {
		t.Error("WriteV1 accepted a working set above usage")
	}
	if err := WriteV2(t.TempDir(), "/x", s); err == nil {
		t.Error("WriteV2 accepted a working set above usage")
	}
}
