package stages

import (
	"errors"
	"slices"
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/podline/podline/cgroupfs"
)

type removedCgroups struct {
	parents []string
	err     error
}

func (r *removedCgroups) RemovePod(parent string) error {
	r.parents = append(r.parents, parent)
	return r.err
}

// A torn-down pod's cgroup is removed where the layout put it, the
// systemd driver's slice included: the pod's own class when its spec is
// known, every class for an orphan.
func TestRemoveCgroupFollowsTheLayout(t *testing.T) {
	layout := cgroupfs.Layout{Root: "/", PerQOS: true, Driver: cgroupfs.DriverSystemd}
	r := &removedCgroups{}
	s := &SandboxStage{Node: &Node{Cgroups: layout}, Cgroups: r}

	pod := &v1.Pod{}
	pod.UID = "ab-12"
	if err := s.removeCgroup(&Work{UID: pod.UID, Pod: pod}); err != nil {
		t.Fatal(err)
	}
	want := []string{"/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-podab_12.slice"}
	if !slices.Equal(r.parents, want) {
		t.Errorf("removed %q, want %q", r.parents, want)
	}

	r.parents, r.err = nil, cgroupfs.ErrBusy
	if err := s.removeCgroup(&Work{UID: "orphan"}); !errors.Is(err, cgroupfs.ErrBusy) {
		t.Errorf("error %v, want the remover's", err)
	}
	want = []string{
		"/kubepods.slice/kubepods-podorphan.slice",
		"/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-podorphan.slice",
		"/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-podorphan.slice",
	}
	if !slices.Equal(r.parents, want) {
		t.Errorf("orphan: removed %q, want %q", r.parents, want)
	}

	// Without a remover (tests, --cgroups-per-qos off elsewhere) nothing is done.
	s.Cgroups = nil
	if err := s.removeCgroup(&Work{UID: "x"}); err != nil {
		t.Error(err)
	}
}
