package cgroupfs

import (
	"path"
	"testing"
)

// expandSlice is systemd's placement of a slice by its name (runc's and
// the kubelet's ExpandSlice).
func TestExpandSlice(t *testing.T) {
	f := func(unit, want string) {
		t.Helper()
		got, err := expandSlice(unit)
		if want == "" {
			if err == nil {
				t.Errorf("expandSlice(%q) = %q, want an error", unit, got)
			}
			return
		}
		if err != nil || got != want {
			t.Errorf("expandSlice(%q) = %q, %v, want %q", unit, got, err, want)
		}
	}
	f("-.slice", "/")
	f("kubepods.slice", "/kubepods.slice")
	f("kubepods-burstable.slice", "/kubepods.slice/kubepods-burstable.slice")
	f("a-b-c.slice", "/a.slice/a-b.slice/a-b-c.slice")
	f("a_b-c.d.slice", "/a_b.slice/a_b-c.d.slice")
	f(".slice", "")
	f("a--b.slice", "")
	f("-a.slice", "")
	f("a-.slice", "")
	f("a/b.slice", "")
	f("cri-containerd-1.scope", "")
	f("kubepods", "")
}

func TestSystemdCgroup(t *testing.T) {
	f := func(want string, components ...string) {
		t.Helper()
		got := systemdCgroup(components)
		if got != want {
			t.Errorf("systemdCgroup(%q) = %q, want %q", components, got, want)
		}
		if len(components) > 0 {
			// The name's own placement is the same path.
			if back, err := expandSlice(path.Base(got)); err != nil || back != got {
				t.Errorf("expandSlice of %q = %q, %v", got, back, err)
			}
		}
	}
	f("/")
	f("/kubepods.slice", "kubepods")
	f("/kubepods.slice/kubepods-pod1_2.slice", "kubepods", "pod1-2")
	f("/p_e.slice/p_e-kubepods.slice", "p-e", "kubepods")
}

func TestParentSlice(t *testing.T) {
	for cg, want := range map[string]string{
		"/kubepods.slice":                                 "-.slice",
		"/kubepods.slice/kubepods-burstable.slice":        "kubepods.slice",
		"/r.slice/r-kubepods.slice/r-kubepods-pod1.slice": "r-kubepods.slice",
	} {
		if got := parentSlice(cg); got != want {
			t.Errorf("parentSlice(%q) = %q, want %q", cg, got, want)
		}
	}
}

// The pod-cgroup check behind RemovePod accepts pod slices under any root
// and nothing else: not the QoS slices, not other slices, not a name whose
// path is not systemd's placement of it.
func TestIsPodCgroupSystemd(t *testing.T) {
	f := func(p string, want bool) {
		t.Helper()
		if got := isPodCgroup(p); got != want {
			t.Errorf("isPodCgroup(%q) = %v, want %v", p, got, want)
		}
	}
	f("/kubepods.slice/kubepods-pod1_2.slice", true)
	f("/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-podabc.slice", true)
	f("/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-podabc.slice", true)
	f("/r.slice/r-kubepods.slice/r-kubepods-besteffort.slice/r-kubepods-besteffort-podabc.slice", true)
	f("/r.slice/r-s.slice/r-s-kubepods.slice/r-s-kubepods-podabc.slice", true)

	f("/kubepods.slice", false)
	f("/kubepods.slice/kubepods-burstable.slice", false)
	f("/kubepods.slice/kubepods-pod.slice", false)
	f("/kubepods.slice/kubepods-pod.x.slice", false) // ".x" is no UID
	f("/system.slice/system-pod1.slice", false)
	f("/kubepods.slice/kubepods-other.slice/kubepods-other-pod1.slice", false)
	f("/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1.slice/cri-containerd-1.scope", false)
	f("/kubepods-pod1.slice", false)                                                    // not where systemd puts it
	f("/x/kubepods.slice/kubepods-pod1.slice", false)                                   // nor this
	f("/kubepods.slice/../kubepods.slice/kubepods-pod1.slice", false)                   // not clean
	f("/kubepods.slice/kubepods-besteffort.slice/kubepods-burstable-pod1.slice", false) // wrong level
	f("kubepods.slice/kubepods-pod1.slice", false)
	// A cgroupfs pod whose UID ends in ".slice" is still a cgroupfs pod.
	f("/kubepods/burstable/poda.slice", true)
}
