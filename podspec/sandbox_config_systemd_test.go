package podspec

import (
	"testing"

	"github.com/podline/podline/cgroupfs"
)

// With the systemd driver the runtime gets the pod slice's full cgroup
// path as CgroupParent, as the kubelet sends it (cm's Name, ToSystemd);
// containerd takes its base name as the slice of the container's scope.
func TestSandboxConfigSystemdCgroupParent(t *testing.T) {
	node := *sandboxNode
	node.Cgroups = cgroupfs.Layout{Root: "/", PerQOS: true, Driver: cgroupfs.DriverSystemd}
	cfg := SandboxConfig(unitPod(), 0, &node)
	want := "/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-poduid_web.slice"
	if got := cfg.GetLinux().GetCgroupParent(); got != want {
		t.Errorf("CgroupParent = %q, want %q", got, want)
	}
}
