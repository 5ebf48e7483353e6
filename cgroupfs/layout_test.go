package cgroupfs

import (
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

func TestPodParent(t *testing.T) {
	f := func(l Layout, qos v1.PodQOSClass, want string) {
		t.Helper()
		if got := l.PodParent(types.UID("0b5c-uid"), qos); got != want {
			t.Errorf("%+v.PodParent(%s) = %q, want %q", l, qos, got, want)
		}
	}
	perQOS := Layout{Root: "/", PerQOS: true}
	f(perQOS, v1.PodQOSGuaranteed, "/kubepods/pod0b5c-uid")
	f(perQOS, v1.PodQOSBurstable, "/kubepods/burstable/pod0b5c-uid")
	f(perQOS, v1.PodQOSBestEffort, "/kubepods/besteffort/pod0b5c-uid")
	f(perQOS, "", "/kubepods/burstable/pod0b5c-uid")
	f(Layout{PerQOS: true}, v1.PodQOSBestEffort, "/kubepods/besteffort/pod0b5c-uid")
	f(Layout{Root: "/podline", PerQOS: true}, v1.PodQOSGuaranteed, "/podline/kubepods/pod0b5c-uid")
	f(Layout{Root: "/podline/", PerQOS: true}, v1.PodQOSBurstable, "/podline/kubepods/burstable/pod0b5c-uid")
	f(Layout{Root: "/podline", PerQOS: true, Driver: DriverCgroupfs}, v1.PodQOSGuaranteed, "/podline/kubepods/pod0b5c-uid")
	f(Layout{Root: "/podline"}, v1.PodQOSGuaranteed, "")
	f(Layout{}, v1.PodQOSBestEffort, "")
}

// The systemd driver's names are the kubelet's (cm.CgroupName.ToSystemd):
// components joined with "-", each one's "-" as "_", expanded into the
// slice's cgroup path. --cgroup-root is converted the same way, so a root
// of "/podline-e2e" is the top slice and the prefix of every name below.
func TestPodParentSystemd(t *testing.T) {
	f := func(root string, qos v1.PodQOSClass, want string) {
		t.Helper()
		l := Layout{Root: root, PerQOS: true, Driver: DriverSystemd}
		if got := l.PodParent("0b5c-77-uid", qos); got != want {
			t.Errorf("root %q: PodParent(%s) = %q, want %q", root, qos, got, want)
		}
		if got := l.PodParent("0b5c-77-uid", qos); !isPodCgroup(got) {
			t.Errorf("root %q: isPodCgroup(%q) = false", root, got)
		}
	}
	f("/", v1.PodQOSGuaranteed, "/kubepods.slice/kubepods-pod0b5c_77_uid.slice")
	f("/", v1.PodQOSBurstable, "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod0b5c_77_uid.slice")
	f("/", v1.PodQOSBestEffort, "/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod0b5c_77_uid.slice")
	f("", v1.PodQOSGuaranteed, "/kubepods.slice/kubepods-pod0b5c_77_uid.slice")
	f("/podline-e2e", v1.PodQOSBurstable,
		"/podline_e2e.slice/podline_e2e-kubepods.slice/podline_e2e-kubepods-burstable.slice/podline_e2e-kubepods-burstable-pod0b5c_77_uid.slice")
	f("/a/b-c/", v1.PodQOSGuaranteed, "/a.slice/a-b_c.slice/a-b_c-kubepods.slice/a-b_c-kubepods-pod0b5c_77_uid.slice")
	if got := (Layout{Driver: DriverSystemd}).PodParent("x", v1.PodQOSGuaranteed); got != "" {
		t.Errorf("cgroups-per-qos off: PodParent = %q, want none", got)
	}
}

// A UID that is not one path element gets no cgroup: joined as text it
// would name another pod's cgroup ("x/../pod<other>") or leave kubepods.
func TestPodParentUnsafeUID(t *testing.T) {
	for _, l := range []Layout{{Root: "/", PerQOS: true}, {Root: "/", PerQOS: true, Driver: DriverSystemd}} {
		for _, uid := range []types.UID{"x/../pod2", "../../etc", "..", ".", "a/b", "", ".hidden"} {
			for _, qos := range []v1.PodQOSClass{v1.PodQOSGuaranteed, v1.PodQOSBurstable, v1.PodQOSBestEffort} {
				if got := l.PodParent(uid, qos); got != "" {
					t.Errorf("%s: PodParent(%q, %s) = %q, want none", l.Driver, uid, qos, got)
				}
			}
		}
	}
}

func TestContainerCgroup(t *testing.T) {
	f := func(l Layout, parent, want string) {
		t.Helper()
		if got := l.ContainerCgroup(parent, "c0ffee"); got != want {
			t.Errorf("%+v.ContainerCgroup(%q) = %q, want %q", l, parent, got, want)
		}
	}
	f(Layout{PerQOS: true}, "/kubepods/pod1", "/kubepods/pod1/c0ffee")
	f(Layout{PerQOS: true, Driver: DriverCgroupfs}, "/r/kubepods/besteffort/pod1", "/r/kubepods/besteffort/pod1/c0ffee")
	f(Layout{PerQOS: true}, "", "")
	sd := "/kubepods.slice/kubepods-pod1.slice"
	f(Layout{PerQOS: true, Driver: DriverSystemd}, sd, sd+"/cri-containerd-c0ffee.scope")
	f(Layout{PerQOS: true, Driver: DriverSystemd, ScopePrefix: ScopePrefix("containerd")}, sd, sd+"/cri-containerd-c0ffee.scope")
	f(Layout{PerQOS: true, Driver: DriverSystemd, ScopePrefix: ScopePrefix("cri-o")}, sd, sd+"/crio-c0ffee.scope")
	f(Layout{PerQOS: true, Driver: DriverSystemd}, "", "")
}

func TestScopePrefix(t *testing.T) {
	for name, want := range map[string]string{"containerd": "cri-containerd", "cri-o": "crio", "podline-fake": "cri-containerd", "": "cri-containerd"} {
		if got := ScopePrefix(name); got != want {
			t.Errorf("ScopePrefix(%q) = %q, want %q", name, got, want)
		}
	}
}

func TestParseDriver(t *testing.T) {
	for _, s := range []string{"cgroupfs", "systemd"} {
		if d, err := ParseDriver(s); err != nil || string(d) != s {
			t.Errorf("ParseDriver(%q) = %q, %v", s, d, err)
		}
	}
	for _, s := range []string{"", "Systemd", "cgroupfs ", "docker"} {
		if _, err := ParseDriver(s); err == nil || !strings.Contains(err.Error(), `want "cgroupfs" or "systemd"`) {
			t.Errorf("ParseDriver(%q) = %v, want an error naming both drivers", s, err)
		}
	}
}

func TestLayoutValidate(t *testing.T) {
	f := func(l Layout, wantErr string) {
		t.Helper()
		err := l.Validate()
		if wantErr == "" && err != nil || wantErr != "" && (err == nil || !strings.Contains(err.Error(), wantErr)) {
			t.Errorf("%+v.Validate() = %v, want %q", l, err, wantErr)
		}
	}
	f(Layout{Root: "/", PerQOS: true}, "")
	f(Layout{Root: "/podline e2e", PerQOS: true}, "")
	f(Layout{Root: "/podline-e2e", PerQOS: true, Driver: DriverSystemd}, "")
	f(Layout{Root: "/a/b.c:d_e", PerQOS: true, Driver: DriverSystemd}, "")
	f(Layout{Root: "/podline e2e", PerQOS: true, Driver: DriverSystemd}, `"podline e2e" cannot be part of a systemd unit name`)
	f(Layout{Root: "/", Driver: "docker"}, "unknown cgroup driver")
}

// The root's levels are made (when missing) before kubepods, outermost
// first.
func TestRootLevels(t *testing.T) {
	f := func(l Layout, want ...string) {
		t.Helper()
		if got := l.rootLevels(); strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("%+v.rootLevels() = %q, want %q", l, got, want)
		}
	}
	f(Layout{Root: "/"})
	f(Layout{})
	f(Layout{Root: "/a/b"}, "/a", "/a/b")
	f(Layout{Root: "/", Driver: DriverSystemd})
	f(Layout{Root: "/a/b-c", Driver: DriverSystemd}, "/a.slice", "/a.slice/a-b_c.slice")
}
