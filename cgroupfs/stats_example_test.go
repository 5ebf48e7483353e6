package cgroupfs_test

import (
	"fmt"
	"os"
	"time"

	"github.com/podline/podline/cgroupfs"
	"github.com/podline/podline/cgroupfs/cgroupfstest"
)

// A scrape reads each container's cgroup and rates its CPU counter
// against the previous scrape.
func ExampleReader() {
	root, _ := os.MkdirTemp("", "cgroups")
	defer os.RemoveAll(root)
	const ctr = "/kubepods/burstable/pod1234/c0ffee"
	write := func(cpu uint64) {
		cgroupfstest.WriteV1(root, ctr, cgroupfs.Stats{
			CPUUsageNanos: cpu, MemoryUsage: 96 << 20, MemoryWorkingSet: 64 << 20, Pids: 3,
			HasCPU: true, HasMemory: true, HasPids: true,
		})
	}
	r := cgroupfs.NewReaderAt(false, root)
	var rates cgroupfs.RateTracker
	t0 := time.Now()
	for i, at := range []time.Time{t0, t0.Add(10 * time.Second)} {
		write(uint64(i) * 2500e6) // 2.5 s of CPU in 10 s
		s, err := r.Read(ctr)
		if err != nil {
			fmt.Println(err)
			return
		}
		nanoCores, ok := rates.NanoCores(ctr, s.CPUUsageNanos, at)
		fmt.Printf("working set %d MiB, %d pids, rate %d (ok %v)\n", s.MemoryWorkingSet>>20, s.Pids, nanoCores, ok)
	}
	// Output:
	// working set 64 MiB, 3 pids, rate 0 (ok false)
	// working set 64 MiB, 3 pids, rate 250000000 (ok true)
}
