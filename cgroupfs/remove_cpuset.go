package cgroupfs

import (
	"os"
	"path/filepath"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// A v1 cpuset cgroup is born with sched_load_balance on (the kernel sets it
// on every new cpuset) and with its parent's cpus (clone_children, see
// ensureCpuset). Removing one such cpuset makes the kernel "turn load
// balancing off" for it while the css goes offline: a check of every
// sibling and a rebuild of the scheduling domains that walks every cpuset
// on the host twice, in a kworker, holding cgroup_mutex. At 10,000 pods
// that was the largest cost of a mass delete (a third of both cores in
// cpuset_css_offline, and the waiters spinning on cgroup_mutex besides),
// invisible in podline's own CPU; it made deleting pods slower than
// starting them.
//
// Emptied of its cpus first, then with the flag off, the cpuset goes
// offline with nothing to do: each write checks the siblings once, and
// neither rebuilds (the kernel rebuilds only for a load-balanced cpuset
// with cpus). That is safe where it changes no scheduling domain: when an
// ancestor with cpus balances load, the domains cover its whole subtree
// whatever the flags below it say. The mount's root is such an ancestor on
// every ordinary host; where it does not balance (CPU isolation set up by
// hand), the cpuset is removed as it stands and the kernel does its work.
//
// A removal that fails after emptying (a process still in the pod) leaves
// a cpuset no process can join; the runtime's next container there fails
// at once. A pod of the same UID that comes back takes EnsurePod's general
// path, whose ensureCpuset fills the cpus and turns the flag back on.

// cpusetRoots remembers, per hierarchy mount point, whether it is a v1
// cpuset hierarchy: a handful of entries, filled at the first removal.
var cpusetRoots sync.Map // string → bool

// isCpusetV1 reports whether mnt is the root of a v1 cpuset hierarchy,
// the only kind with cpuset.sched_load_balance.
func isCpusetV1(mnt string) bool {
	if v, ok := cpusetRoots.Load(mnt); ok {
		return v.(bool)
	}
	_, err := os.Stat(filepath.Join(mnt, cpusetBalanceFile))
	is := err == nil
	cpusetRoots.Store(mnt, is)
	return is
}

const (
	cpusetBalanceFile = "cpuset.sched_load_balance"
	cpusetCpusFile    = "cpuset.cpus"
)

// balancesLoad reports whether the cpuset whose sched_load_balance reads
// flag spreads load over its cpus: then nothing below it shapes the
// scheduling domains.
func balancesLoad(flag string) bool { return strings.TrimSpace(flag) == "1" }

// quiesceCpuset prepares the empty cpuset dir in hierarchy mnt for a cheap
// rmdir: its cpus emptied, then its load balancing off. It is best effort:
// a cpuset that refuses (a process or a child still in it) is left as it
// was and its rmdir reports why. It does nothing when the hierarchy's root
// does not balance load, as the kernel's own removal is needed there.
func quiesceCpuset(mnt, dir string) {
	root, err := readCgroupFile(mnt, cpusetBalanceFile)
	if err != nil || !balancesLoad(root) {
		return
	}
	if writeFileNoCreate(filepath.Join(dir, cpusetCpusFile), "\n") != nil {
		return
	}
	_ = writeFileNoCreate(filepath.Join(dir, cpusetBalanceFile), "0")
}

// writeFileNoCreate writes value to an existing file: a cgroup file, which
// a plain directory standing in for one in a test does not have.
func writeFileNoCreate(path, value string) error {
	fd, err := unix.Open(path, unix.O_WRONLY|unix.O_TRUNC|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	_, err = unix.Write(fd, []byte(value))
	return err
}
