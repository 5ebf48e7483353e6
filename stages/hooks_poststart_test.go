package stages

import (
	"reflect"
	"testing"

	"github.com/podline/podline/pleg"
)

func pendingRuns(ids map[string]string) map[string]*postStartRun {
	runs := make(map[string]*postStartRun, len(ids))
	for id, name := range ids {
		runs[id] = &postStartRun{name: name, done: make(chan struct{})}
	}
	return runs
}

func TestPostStartView(t *testing.T) {
	rt := rtPod(sbList(rtReady("sb1", 0)),
		rtRunning("a1", "sb1", "a", 0), rtRunning("b1", "sb1", "b", 0), rtExited("c1", "sb1", "c", 0, 1, baseTime))
	if got := postStartView(rt, nil); got != rt {
		t.Error("no hook pending: the view is not the pod itself")
	}
	view := postStartView(rt, pendingRuns(map[string]string{"a1": "a", "c1": "c"}))
	want := map[string]pleg.ContainerState{"a1": pleg.ContainerCreated, "b1": pleg.ContainerRunning, "c1": pleg.ContainerExited}
	for id, st := range want {
		if got := view.Container(id).State; got != st {
			t.Errorf("%s: %v in the view, want %v", id, got, st)
		}
	}
	if rt.Container("a1").State != pleg.ContainerRunning {
		t.Error("the view changed the cache's pod")
	}
	if v := postStartView(nil, pendingRuns(map[string]string{"a1": "a"})); v != nil {
		t.Errorf("nil pod: view %+v", v)
	}
}

func TestWithPostStart(t *testing.T) {
	if got := withPostStart(nil, nil); got != nil {
		t.Errorf("no hook pending, no probes: %+v, want nil (no probes)", got)
	}
	kill := &ProbeKill{Message: "failed liveness probe"}
	probes := unhealthyProbes{"a": kill, "b": kill} // started and ready, and unhealthy
	p := withPostStart(probes, pendingRuns(map[string]string{"a1": "a"}))
	if p.Started("a") || p.Ready("a") || p.Unhealthy("a") != nil {
		t.Error("a container whose hook runs counts as started, ready or unhealthy")
	}
	if !p.Started("b") || !p.Ready("b") || p.Unhealthy("b") == nil {
		t.Error("a container without a pending hook lost its probes' results")
	}
	none := withPostStart(nil, pendingRuns(map[string]string{"a1": "a"}))
	if none.Started("a") || !none.Started("b") || !none.Ready("b") || none.Unhealthy("b") != nil {
		t.Error("without probes: only the container whose hook runs has not started")
	}
}

func TestKubeletPodName(t *testing.T) {
	if got := kubeletPodName(unitPod()); got != "web_default(uid-web)" {
		t.Errorf("%q", got)
	}
}

func TestWithKills(t *testing.T) {
	hook := KillAction{ID: "a1", Name: "a", Event: "FailedPostStartHook"}
	spec := KillAction{ID: "a1", Name: "a", Reason: "spec changed"}
	other := KillAction{ID: "b1", Name: "b"}
	for _, c := range []struct {
		name        string
		first, rest []KillAction
		want        []KillAction
	}{
		{"no hook failed", nil, []KillAction{other}, []KillAction{other}},
		{"the hook's kill first", []KillAction{hook}, []KillAction{other}, []KillAction{hook, other}},
		{"one kill per container: the hook's", []KillAction{hook}, []KillAction{spec, other}, []KillAction{hook, other}},
	} {
		if got := withKills(c.first, c.rest); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
}
