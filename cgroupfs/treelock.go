package cgroupfs

import "sync"

// treeLock serialises podline's own cgroup mkdirs and rmdirs. The kernel
// takes one global mutex (cgroup_mutex) for each of them, so no two ever
// ran at once; but with dozens of sandbox workers creating or removing pod
// cgroups together, the waiters spun on that mutex in the kernel (at
// 10,000 pods, a ninth of a teardown's CPU). Waiting here parks a
// goroutine instead, and leaves the CPU to work that can run.
var treeLock sync.Mutex
