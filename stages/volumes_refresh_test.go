package stages

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// fakeContent is a ContentSource that records what the stage asks of it.
type fakeContent struct {
	mu        sync.Mutex
	setups    []string // volume names, in order
	mark      uint64
	stale     bool
	fail      error
	refreshed []uint64
	released  []types.UID
}

func (f *fakeContent) SetUp(_ context.Context, _ *v1.Pod, vol *v1.Volume, _ string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.setups = append(f.setups, vol.Name)
	return f.fail
}

func (f *fakeContent) Stale(*v1.Pod) (uint64, bool) { return f.mark, f.stale }

func (f *fakeContent) Refreshed(_ types.UID, mark uint64) { f.refreshed = append(f.refreshed, mark) }

func (f *fakeContent) Release(uid types.UID) { f.released = append(f.released, uid) }

// stageEvents records events as "reason: message".
type stageEvents struct{ events []string }

func (r *stageEvents) PodEvent(_ *v1.Pod, _, _, reason, message string) {
	r.events = append(r.events, reason+": "+message)
}

// A running pod's content volumes are written again in a sync pass when
// the source says they are stale, and only then: its other volumes are
// never set up again. A failed refresh leaves the pod running and asks
// for a pass later; a teardown releases the pod.
func TestVolumeStageRefresh(t *testing.T) {
	node := &Node{RootDir: t.TempDir()}
	pod := unitPod(func(p *v1.Pod) {
		p.Spec.Volumes = []v1.Volume{
			{Name: "scratch", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}},
			{Name: "cfg", VolumeSource: v1.VolumeSource{ConfigMap: &v1.ConfigMapVolumeSource{}}},
			{Name: "info", VolumeSource: v1.VolumeSource{DownwardAPI: &v1.DownwardAPIVolumeSource{}}},
		}
	})
	content := &fakeContent{mark: 3}
	events := &stageEvents{}
	s := &VolumeStage{Node: node, Content: content, Events: events}
	ps := &PodSync{}
	pass := func() (*Work, Outcome) {
		t.Helper()
		w := &Work{UID: pod.UID, Pod: pod, Sync: ps, ctx: context.Background()}
		return w, s.Handle(w)
	}
	check := func(what string, setups []string, refreshed []uint64) {
		t.Helper()
		if !slices.Equal(content.setups, setups) || !slices.Equal(content.refreshed, refreshed) {
			t.Fatalf("%s: set up %v, refreshed %v; want %v, %v", what, content.setups, content.refreshed, setups, refreshed)
		}
	}

	if _, out := pass(); out.Err != nil || !ps.VolumesReady {
		t.Fatalf("first sync: %v", out.Err)
	}
	check("first sync", []string{"cfg", "info"}, []uint64{3})

	if _, out := pass(); out.Err != nil {
		t.Fatal(out.Err)
	}
	check("sync, not stale", []string{"cfg", "info"}, []uint64{3})

	content.stale, content.mark = true, 5
	if _, out := pass(); out.Err != nil {
		t.Fatal(out.Err)
	}
	check("sync, stale", []string{"cfg", "info", "cfg", "info"}, []uint64{3, 5})

	content.setups, content.fail = nil, errors.New("configMap gone")
	w, out := pass()
	if out.Err != nil {
		t.Fatalf("a failed refresh failed the pass: %v", out.Err)
	}
	check("failed refresh", []string{"cfg"}, []uint64{3, 5})
	if w.requeueAfter != refreshRetry {
		t.Errorf("failed refresh asks for a pass in %s, want %s", w.requeueAfter, refreshRetry)
	}
	if len(events.events) != 1 || !strings.HasPrefix(events.events[0], `FailedMount: MountVolume.SetUp failed for volume "cfg"`) {
		t.Errorf("events %q", events.events)
	}

	w = &Work{UID: pod.UID, Pod: pod, Sync: ps, Teardown: true, Removed: true, ctx: context.Background()}
	if out := s.Handle(w); out.Err != nil {
		t.Fatal(out.Err)
	}
	if !slices.Equal(content.released, []types.UID{pod.UID}) || ps.VolumesReady {
		t.Fatalf("teardown released %v, ready %v", content.released, ps.VolumesReady)
	}
}

// A first setup that fails reports no refresh: the pod stays stale.
func TestVolumeStageFirstSetupFails(t *testing.T) {
	node := &Node{RootDir: t.TempDir()}
	pod := unitPod(func(p *v1.Pod) {
		p.Spec.Volumes = []v1.Volume{{Name: "cfg", VolumeSource: v1.VolumeSource{ConfigMap: &v1.ConfigMapVolumeSource{}}}}
	})
	content := &fakeContent{fail: fmt.Errorf("no such configMap")}
	s := &VolumeStage{Node: node, Content: content}
	w := &Work{UID: pod.UID, Pod: pod, Sync: &PodSync{}, ctx: context.Background()}
	if out := s.Handle(w); !errors.Is(out.Err, ErrMount) || len(content.refreshed) != 0 {
		t.Fatalf("error %v, refreshed %v", out.Err, content.refreshed)
	}
}
