package cgroupfs

import "fmt"

// Driver is how pod cgroups are named and made, the kubelet's
// --cgroup-driver: cgroupfs paths made with mkdir, or systemd slice units
// made through systemd's D-Bus API. The runtime must use the same one
// (containerd's SystemdCgroup, CRI-O's cgroup_manager).
type Driver string

const (
	// DriverCgroupfs: "/kubepods/burstable/pod<uid>", made with mkdir.
	DriverCgroupfs Driver = "cgroupfs"
	// DriverSystemd: "/kubepods.slice/kubepods-burstable.slice/
	// kubepods-burstable-pod<uid>.slice", transient slice units.
	DriverSystemd Driver = "systemd"
)

// ParseDriver accepts "cgroupfs" and "systemd", as the kubelet's
// --cgroup-driver does.
func ParseDriver(s string) (Driver, error) {
	switch d := Driver(s); d {
	case DriverCgroupfs, DriverSystemd:
		return d, nil
	}
	return "", fmt.Errorf("unknown cgroup driver %q (want %q or %q)", s, DriverCgroupfs, DriverSystemd)
}

func (d Driver) systemd() bool { return d == DriverSystemd }

// Scope unit prefixes of the runtimes' container cgroups under the
// systemd driver: containerd names a container's cgroup
// "<slice>:cri-containerd:<id>", which runc makes as the scope
// "cri-containerd-<id>.scope" in the slice; CRI-O makes "crio-<id>.scope".
const (
	scopePrefixContainerd = "cri-containerd"
	scopePrefixCRIO       = "crio"
)

// ScopePrefix is the prefix of the container scope units the runtime
// reporting runtimeName (the CRI Version answer) makes under the systemd
// driver: "crio" for CRI-O, "cri-containerd" for containerd and, as the
// kubelet's node tests assume, for any other runtime.
func ScopePrefix(runtimeName string) string {
	if runtimeName == "cri-o" {
		return scopePrefixCRIO
	}
	return scopePrefixContainerd
}
