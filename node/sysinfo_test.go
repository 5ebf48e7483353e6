package node

import (
	"slices"
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/podline/podline/machine"
)

func TestSystemInfo(t *testing.T) {
	m := &machine.Info{MachineID: "mid", SystemUUID: "uuid", BootID: "boot", KernelVersion: "6.18.0",
		OSImage: "Debian GNU/Linux 12 (bookworm)", OperatingSystem: "linux", Architecture: "amd64"}
	got := SystemInfo(m, "containerd", "v1.7.27", "v1.36.3-podline")
	want := v1.NodeSystemInfo{MachineID: "mid", SystemUUID: "uuid", BootID: "boot", KernelVersion: "6.18.0",
		OSImage: "Debian GNU/Linux 12 (bookworm)", ContainerRuntimeVersion: "containerd://1.7.27",
		KubeletVersion: "v1.36.3-podline", OperatingSystem: "linux", Architecture: "amd64"}
	if got != want {
		t.Fatalf("%+v\nwant %+v", got, want)
	}
}

func TestRuntimeVersion(t *testing.T) {
	f := func(name, version, want string) {
		t.Helper()
		if got := RuntimeVersion(name, version); got != want {
			t.Fatalf("%s %s: %q, want %q", name, version, got, want)
		}
	}
	f("containerd", "v1.7.27", "containerd://1.7.27")
	f("containerd", "2.1.0", "containerd://2.1.0")
	f("cri-o", "vendor-build", "cri-o://vendor-build")
	f("fake", "", "fake://Unknown")
}

func TestAddresses(t *testing.T) {
	got := Addresses([]string{"10.0.0.5", "not-an-ip", "fd00::5"}, "host-a")
	want := []v1.NodeAddress{{Type: v1.NodeInternalIP, Address: "10.0.0.5"}, {Type: v1.NodeInternalIP, Address: "fd00::5"},
		{Type: v1.NodeHostName, Address: "host-a"}}
	if !slices.Equal(got, want) {
		t.Fatalf("%v", got)
	}
}
