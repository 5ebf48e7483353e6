package stages

import (
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/podline/podline/pleg"
)

// Every container status lists the container's volume mounts, whatever
// its state, and a read-only mount says whether it is recursively so.
func TestContainerStatusVolumeMounts(t *testing.T) {
	mode := func(m v1.RecursiveReadOnlyMode) *v1.RecursiveReadOnlyMode { return &m }
	pod := unitPod(func(p *v1.Pod) {
		p.Spec.Containers[0].VolumeMounts = []v1.VolumeMount{
			{Name: "data", MountPath: "/data"},
			{Name: "conf", MountPath: "/etc/app", ReadOnly: true},
			{Name: "tree", MountPath: "/tree", ReadOnly: true, RecursiveReadOnly: mode(v1.RecursiveReadOnlyEnabled)},
			{Name: "maybe", MountPath: "/maybe", ReadOnly: true, RecursiveReadOnly: mode(v1.RecursiveReadOnlyIfPossible)},
		}
	})
	want := []v1.VolumeMountStatus{
		{Name: "data", MountPath: "/data"},
		{Name: "conf", MountPath: "/etc/app", ReadOnly: true, RecursiveReadOnly: mode(v1.RecursiveReadOnlyDisabled)},
		{Name: "tree", MountPath: "/tree", ReadOnly: true, RecursiveReadOnly: mode(v1.RecursiveReadOnlyEnabled)},
		// IfPossible is mounted plainly read-only here.
		{Name: "maybe", MountPath: "/maybe", ReadOnly: true, RecursiveReadOnly: mode(v1.RecursiveReadOnlyDisabled)},
	}
	sb := sbList(rtReady("sb1", 1))
	for name, rt := range map[string]*pleg.Pod{
		"not created yet": nil,
		"running":         rtPod(sb, rtRunning("app1", "sb1", "app", 0)),
	} {
		st := computeStatus(pod, rt, nil, nil)
		if got := asJSON(st.ContainerStatuses[0].VolumeMounts); got != asJSON(want) {
			t.Errorf("%s:\n got %s\nwant %s", name, got, asJSON(want))
		}
	}
	bare := computeStatus(unitPod(), nil, nil, nil)
	if vm := bare.ContainerStatuses[0].VolumeMounts; vm != nil {
		t.Errorf("a container without mounts lists %v", vm)
	}
}
