package stages_test

import (
	"sync"
	"testing"

	"github.com/podline/podline/cgroupfs"
)

// podCgroupsRecorder records what the sandbox stage asks of pod cgroups.
type podCgroupsRecorder struct {
	mu  sync.Mutex
	got map[string]cgroupfs.Resources
}

func (r *podCgroupsRecorder) EnsurePod(parent string, res cgroupfs.Resources) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.got == nil {
		r.got = make(map[string]cgroupfs.Resources)
	}
	r.got[parent] = res
	return nil
}

// The node's --pod-max-pids reaches every pod cgroup, whatever the pod
// asks for; without it pods stay unlimited.
func TestSandboxStagePodPidsLimit(t *testing.T) {
	limit := int64(4096)
	for _, podPids := range []*int64{nil, &limit} {
		rec := &podCgroupsRecorder{}
		h := newHarness(t, harnessOpts{limits: rec, podPids: podPids})
		pod := testPod("pids")
		h.pipe.Upsert(pod)
		h.waitRunning(pod.UID)
		rec.mu.Lock()
		if len(rec.got) != 1 {
			t.Fatalf("pod cgroups made: %v, want one", rec.got)
		}
		for parent, res := range rec.got {
			switch {
			case podPids == nil && res.PidsLimit != nil:
				t.Errorf("no --pod-max-pids: %s got pids limit %d", parent, *res.PidsLimit)
			case podPids != nil && (res.PidsLimit == nil || *res.PidsLimit != limit):
				t.Errorf("--pod-max-pids=%d: %s got %v", limit, parent, res.PidsLimit)
			}
		}
		rec.mu.Unlock()
	}
}
