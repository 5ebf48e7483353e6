package stages

import (
	"reflect"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

func TestSortForAdmission(t *testing.T) {
	pod := func(ns, name string, createdMin int) *v1.Pod {
		return unitPod(func(p *v1.Pod) {
			p.Namespace, p.Name, p.UID = ns, name, types.UID("uid-"+ns+"-"+name)
			if createdMin >= 0 {
				p.CreationTimestamp = metav1.NewTime(baseTime.Add(time.Duration(createdMin) * time.Minute))
			}
		})
	}
	// rt describes what the runtime holds: a sandbox made at minute n,
	// ready when n is positive, stopped when negative.
	f := func(what string, rt map[string]int, in []*v1.Pod, want ...string) {
		t.Helper()
		sortForAdmission(in, func(uid types.UID) inRuntime {
			n, ok := rt[string(uid)]
			if !ok {
				return inRuntime{}
			}
			return inRuntime{Since: baseTime.Add(time.Duration(max(n, -n)) * time.Minute), Ready: n > 0}
		})
		var got []string
		for _, p := range in {
			got = append(got, p.Namespace+"/"+p.Name)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\n got %q\nwant %q", what, got, want)
		}
	}
	f("empty", nil, nil)
	f("one", nil, []*v1.Pod{pod("a", "x", 1)}, "a/x")
	f("by creation time, not name", nil,
		[]*v1.Pod{pod("a", "new", 3), pod("a", "old", 1), pod("b", "mid", 2)},
		"a/old", "b/mid", "a/new")
	f("no creation time (static pods) goes first, as the zero time", nil,
		[]*v1.Pod{pod("a", "api", 1), pod("kube-system", "static", -1)},
		"kube-system/static", "a/api")
	f("equal times by namespace, name and UID", nil,
		[]*v1.Pod{pod("b", "x", 1), pod("a", "y", 1), pod("a", "x", 1)},
		"a/x", "a/y", "b/x")
	f("running pods go first, by creation time",
		map[string]int{"uid-a-new": 9, "uid-a-newer": 5},
		[]*v1.Pod{pod("a", "old", 1), pod("a", "newer", 4), pod("a", "new", 3)},
		"a/new", "a/newer", "a/old")
	f("a finished pod (sandbox stopped) does not go before running ones",
		map[string]int{"uid-a-done": -1, "uid-a-up": 2},
		[]*v1.Pod{pod("a", "done", 1), pod("a", "up", 2), pod("a", "new", 3)},
		"a/up", "a/done", "a/new")
	f("static pods that run go by sandbox age",
		map[string]int{"uid-s-b": 1, "uid-s-c": 2},
		[]*v1.Pod{pod("s", "a", -1), pod("s", "c", -1), pod("s", "b", -1)},
		"s/b", "s/c", "s/a")
	f("a static pod whose sandbox stopped goes before a new one",
		map[string]int{"uid-s-z": -4},
		[]*v1.Pod{pod("s", "a", -1), pod("s", "z", -1)},
		"s/z", "s/a")
	f("a running pod's creation time ranks before its sandbox's",
		map[string]int{"uid-a-x": 9, "uid-a-y": 1},
		[]*v1.Pod{pod("a", "y", 2), pod("a", "x", 1)},
		"a/x", "a/y")
}

func TestAdmitterArrived(t *testing.T) {
	a := &Admitter{Node: &Node{Name: "node-a", CPUMilli: 1000, MemoryBytes: 1 << 30, MaxPods: 10}}
	created := func(name string, minute int, cpu string) *v1.Pod {
		return unitPod(func(p *v1.Pod) {
			p.Name, p.UID = name, types.UID("uid-"+name)
			p.CreationTimestamp = metav1.NewTime(baseTime.Add(time.Duration(minute) * time.Minute))
			p.Spec.Containers[0].Resources = testResources(cpu, "", "", "")
		})
	}
	// As a source lists them: by name. The newest comes first.
	pods := []*v1.Pod{created("a-newest", 3, "400m"), created("b-oldest", 1, "400m"), created("c-middle", 2, "400m")}
	gone := created("d-deleting", 0, "400m")
	gone.DeletionTimestamp = &metav1.Time{Time: baseTime}
	pods = append(pods, gone)
	a.Arrived(pods)
	var names []string
	for _, p := range pods {
		names = append(names, p.Name)
	}
	if want := []string{"d-deleting", "b-oldest", "c-middle", "a-newest"}; !reflect.DeepEqual(names, want) {
		t.Errorf("arrival order %q, want %q", names, want)
	}
	if n, used := a.Admitted(); n != 2 || used.CPUMilli != 800 {
		t.Errorf("after arrival: %d pods using %dm, want the two oldest using 800m", n, used.CPUMilli)
	}
	// The passes come in any order and carry the decisions out.
	for _, name := range []string{"a-newest", "c-middle", "b-oldest"} {
		p := created(name, 0, "400m")
		w := &Work{UID: p.UID, Pod: p, Sync: &PodSync{}}
		a.Handle(w)
		if admitted := name != "a-newest"; w.Sync.Admitted != admitted || (w.Sync.Rejection == nil) != admitted {
			t.Errorf("%s: admitted %v, rejection %+v; want admitted %v", name, w.Sync.Admitted, w.Sync.Rejection, admitted)
		}
	}
	if len(a.refused) != 0 {
		t.Errorf("decided rejections left after their passes: %v", a.refused)
	}
	// A refused pod removed before its pass leaves nothing behind.
	late := created("e-late", 4, "400m")
	a.Arrived([]*v1.Pod{late})
	a.Release(late.UID)
	if len(a.refused) != 0 {
		t.Errorf("a released pod's rejection is kept: %v", a.refused)
	}
}
