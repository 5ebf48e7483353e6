package main

import (
	"os"
	"runtime"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/podline/podline/bench/internal/result"
	"github.com/podline/podline/cri/fake"
)

func machine() result.Machine {
	m := result.Machine{CPUs: runtime.NumCPU()}
	m.Hostname, _ = os.Hostname()
	var u unix.Utsname
	if unix.Uname(&u) == nil {
		m.Kernel = unix.ByteSliceToString(u.Release[:])
	}
	var si unix.Sysinfo_t
	if unix.Sysinfo(&si) == nil {
		m.MemoryMiB = int(uint64(si.Totalram) * uint64(si.Unit) >> 20)
	}
	m.CgroupMode = cgroupMode()
	return m
}

// cgroupMode tells v2 (unified at /sys/fs/cgroup), hybrid (v1 with a
// unified mount beside) or v1.
func cgroupMode() string {
	var st unix.Statfs_t
	if unix.Statfs("/sys/fs/cgroup", &st) == nil && st.Type == unix.CGROUP2_SUPER_MAGIC {
		return "v2"
	}
	if unix.Statfs("/sys/fs/cgroup/unified", &st) == nil && st.Type == unix.CGROUP2_SUPER_MAGIC {
		return "hybrid"
	}
	return "v1"
}

// fakeLatency is what cmd/fakecri answers with by default, in ms, for the
// methods a pod start and stop go through.
func fakeLatency() result.Latency {
	out := result.Latency{}
	for name, d := range fake.ContainerdLikeLatency() {
		if strings.Contains("RunPodSandbox StopPodSandbox CreateContainer StartContainer StopContainer", name) {
			out[name] = float64(d.Microseconds()) / 1000
		}
	}
	return out
}
