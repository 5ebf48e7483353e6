package cgroupfs_test

import (
	"fmt"
	"testing"

	"github.com/podline/podline/cgroupfs"
	"github.com/podline/podline/cgroupfs/cgroupfstest"
)

// fixtureTree writes pods burstable pods of one container each and returns
// the container cgroup paths.
func fixtureTree(tb testing.TB, unified bool, pods int) (root string, paths []string) {
	tb.Helper()
	root = cgroupfstest.TempDir(tb)
	write := cgroupfstest.WriteV1
	if unified {
		write = cgroupfstest.WriteV2
	}
	for i := range pods {
		pod := fmt.Sprintf("/kubepods/burstable/pod%08x-0000-4000-8000-%012x", i, i)
		ctr := pod + fmt.Sprintf("/%064x", i)
		s := cgroupfs.Stats{
			CPUUsageNanos: uint64(i) * 1e6, MemoryUsage: 64 << 20, MemoryWorkingSet: 48 << 20,
			MemoryRSS: 40 << 20, MemoryCache: 24 << 20, PageFaults: 1000, MajorPageFaults: 3,
			MemoryLimit: 128 << 20, Pids: 4, HasCPU: true, HasMemory: true, HasPids: true,
		}
		if err := write(root, pod, s); err != nil {
			tb.Fatal(err)
		}
		if err := write(root, ctr, s); err != nil {
			tb.Fatal(err)
		}
		paths = append(paths, ctr)
	}
	return root, paths
}

func benchmarkRead(b *testing.B, unified bool) {
	root, paths := fixtureTree(b, unified, 1000)
	r := cgroupfs.NewReaderAt(unified, root)
	b.ReportAllocs()
	b.ResetTimer()
	i := 0
	for b.Loop() {
		s, err := r.Read(paths[i%len(paths)])
		if err != nil || !s.HasPids {
			b.Fatal(s, err)
		}
		i++
	}
}

// Per cgroup of a 1,000-pod tree.
func BenchmarkReadV1(b *testing.B) { benchmarkRead(b, false) }
func BenchmarkReadV2(b *testing.B) { benchmarkRead(b, true) }

// A scrape of all pods from several goroutines.
func BenchmarkReadV1Parallel(b *testing.B) {
	root, paths := fixtureTree(b, false, 1000)
	r := cgroupfs.NewReaderAt(false, root)
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			if _, err := r.Read(paths[i%len(paths)]); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
}

func TestFixtureTree1000Pods(t *testing.T) {
	for _, unified := range []bool{false, true} {
		root, paths := fixtureTree(t, unified, 1000)
		r := cgroupfs.NewReaderAt(unified, root)
		for i, p := range paths {
			s, err := r.Read(p)
			if err != nil {
				t.Fatal(err)
			}
			if s.CPUUsageNanos != uint64(i)*1e6 || s.MemoryWorkingSet != 48<<20 || s.MemoryLimit != 128<<20 {
				t.Fatalf("unified=%v %s: %+v", unified, p, s)
			}
		}
	}
}
