package cgroupfs

import (
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
	f(Layout{Root: "/podline"}, v1.PodQOSGuaranteed, "")
	f(Layout{}, v1.PodQOSBestEffort, "")
}

// A UID that is not one path element gets no cgroup: joined as text it
// would name another pod's cgroup ("x/../pod<other>") or leave kubepods.
func TestPodParentUnsafeUID(t *testing.T) {
	l := Layout{Root: "/", PerQOS: true}
	for _, uid := range []types.UID{"x/../pod2", "../../etc", "..", ".", "a/b", "", ".hidden"} {
		for _, qos := range []v1.PodQOSClass{v1.PodQOSGuaranteed, v1.PodQOSBurstable, v1.PodQOSBestEffort} {
			if got := l.PodParent(uid, qos); got != "" {
				t.Errorf("PodParent(%q, %s) = %q, want none", uid, qos, got)
			}
		}
	}
}
