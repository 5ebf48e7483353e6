package stages

import (
	"reflect"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

func TestPodRequest(t *testing.T) {
	f := func(name string, apps, inits []v1.ResourceRequirements, want Request) {
		t.Helper()
		pod := unitPod(func(p *v1.Pod) {
			p.Spec.Containers, p.Spec.InitContainers = nil, nil
			for _, r := range apps {
				p.Spec.Containers = append(p.Spec.Containers, v1.Container{Name: "app", Resources: r})
			}
			for _, r := range inits {
				p.Spec.InitContainers = append(p.Spec.InitContainers, v1.Container{Name: "init", Resources: r})
			}
		})
		if got := PodRequest(pod); got != want {
			t.Errorf("%s: %+v, want %+v", name, got, want)
		}
	}
	r := testResources
	f("nothing requested", []v1.ResourceRequirements{{}}, nil, Request{})
	f("app containers add up",
		[]v1.ResourceRequirements{r("250m", "64Mi", "", ""), r("500m", "128Mi", "", "")}, nil,
		Request{CPUMilli: 750, MemoryBytes: 192 << 20})
	f("a limit alone counts as the request",
		[]v1.ResourceRequirements{r("", "", "1", "1Gi"), r("100m", "", "2", "")}, nil,
		Request{CPUMilli: 1100, MemoryBytes: 1 << 30})
	f("the largest init container wins when it is more than the apps",
		[]v1.ResourceRequirements{r("100m", "64Mi", "", "")},
		[]v1.ResourceRequirements{r("2", "32Mi", "", ""), r("1", "16Mi", "", "")},
		Request{CPUMilli: 2000, MemoryBytes: 64 << 20})
	f("init containers run one at a time: their max, not their sum",
		[]v1.ResourceRequirements{r("100m", "", "", "")},
		[]v1.ResourceRequirements{r("300m", "", "", ""), r("400m", "512Mi", "", "")},
		Request{CPUMilli: 400, MemoryBytes: 512 << 20})
}

func TestAdmit(t *testing.T) {
	node := &Node{CPUMilli: 4000, MemoryBytes: 8 << 30, MaxPods: 110}
	labels := map[string]string{"disk": "ssd", "zone": "a"}
	f := func(name string, pod *v1.Pod, used Request, pods int, want *Rejection) {
		t.Helper()
		got := Admit(pod, node, labels, used, pods)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\n got %+v\nwant %+v", name, got, want)
		}
	}
	req := func(cpu, mem string) *v1.Pod {
		return unitPod(func(p *v1.Pod) { p.Spec.Containers[0].Resources = testResources(cpu, mem, "", "") })
	}
	selector := func(sel map[string]string) *v1.Pod {
		return unitPod(func(p *v1.Pod) { p.Spec.NodeSelector = sel })
	}

	f("fits", req("500m", "1Gi"), Request{CPUMilli: 3500, MemoryBytes: 7 << 30}, 109, nil)
	f("best-effort pod on a full node", req("", ""), Request{CPUMilli: 4000, MemoryBytes: 8 << 30}, 50, nil)
	f("pod count", req("", ""), Request{}, 110, &Rejection{Reason: "OutOfpods",
		Message: "Node didn't have enough resource: pods, requested: 1, used: 110, capacity: 110"})
	f("cpu", req("600m", "1Gi"), Request{CPUMilli: 3500}, 3, &Rejection{Reason: "OutOfcpu",
		Message: "Node didn't have enough resource: cpu, requested: 600, used: 3500, capacity: 4000"})
	f("memory", req("100m", "2Gi"), Request{CPUMilli: 100, MemoryBytes: 7 << 30}, 3, &Rejection{Reason: "OutOfmemory",
		Message: "Node didn't have enough resource: memory, requested: 2147483648, used: 7516192768, capacity: 8589934592"})
	f("pods are checked before cpu", req("8", ""), Request{}, 110, &Rejection{Reason: "OutOfpods",
		Message: "Node didn't have enough resource: pods, requested: 1, used: 110, capacity: 110"})
	f("cpu is checked before memory", req("8", "16Gi"), Request{}, 0, &Rejection{Reason: "OutOfcpu",
		Message: "Node didn't have enough resource: cpu, requested: 8000, used: 0, capacity: 4000"})
	f("an init container's larger request counts", unitPod(func(p *v1.Pod) {
		p.Spec.InitContainers = []v1.Container{{Name: "init", Resources: testResources("3", "", "", "")}}
	}), Request{CPUMilli: 2000}, 0, &Rejection{Reason: "OutOfcpu",
		Message: "Node didn't have enough resource: cpu, requested: 3000, used: 2000, capacity: 4000"})
	f("selector matches", selector(map[string]string{"disk": "ssd", "zone": "a"}), Request{}, 0, nil)
	f("selector value differs", selector(map[string]string{"disk": "hdd"}), Request{}, 0, &Rejection{Reason: "NodeAffinity",
		Message: "Predicate NodeAffinity failed: node(s) didn't match Pod's node affinity/selector"})
	f("selector label missing", selector(map[string]string{"gpu": "true"}), Request{}, 0, &Rejection{Reason: "NodeAffinity",
		Message: "Predicate NodeAffinity failed: node(s) didn't match Pod's node affinity/selector"})
	f("resources are checked before the selector", unitPod(func(p *v1.Pod) {
		p.Spec.NodeSelector = map[string]string{"gpu": "true"}
		p.Spec.Containers[0].Resources = testResources("5", "", "", "")
	}), Request{}, 0, &Rejection{Reason: "OutOfcpu",
		Message: "Node didn't have enough resource: cpu, requested: 5000, used: 0, capacity: 4000"})

	unlimited := &Node{CPUMilli: 4000, MemoryBytes: 8 << 30}
	if rej := Admit(req("", ""), unlimited, nil, Request{}, 100000); rej != nil {
		t.Errorf("MaxPods 0 means no pod limit, got %+v", rej)
	}
}

func TestAdmitterLedger(t *testing.T) {
	a := &Admitter{Node: &Node{CPUMilli: 1000, MemoryBytes: 1 << 30, MaxPods: 10}}
	pass := func(uid string, cpu string) *Work {
		w := &Work{UID: types.UID(uid), Sync: &PodSync{},
			Pod: unitPod(func(p *v1.Pod) { p.Spec.Containers[0].Resources = testResources(cpu, "", "", "") })}
		a.Handle(w)
		return w
	}
	check := func(what string, wantPods int, wantCPU int64) {
		t.Helper()
		if n, used := a.Admitted(); n != wantPods || used.CPUMilli != wantCPU {
			t.Errorf("%s: %d pods using %dm, want %d using %dm", what, n, used.CPUMilli, wantPods, wantCPU)
		}
	}
	if w := pass("a", "600m"); !w.Sync.Admitted || w.Sync.Rejection != nil {
		t.Fatalf("first pod not admitted: %+v", w.Sync)
	}
	check("one admitted", 1, 600)
	if w := pass("a", "600m"); !w.Sync.Admitted {
		t.Error("an admitted pod passing again is still admitted")
	}
	check("same pod again counts once", 1, 600)
	w := pass("b", "600m")
	if w.Sync.Admitted || w.Sync.Rejection == nil || w.Sync.Rejection.Reason != "OutOfcpu" {
		t.Errorf("second pod: admitted %v, rejection %+v, want OutOfcpu", w.Sync.Admitted, w.Sync.Rejection)
	}
	check("a rejected pod takes no share", 1, 600)
	a.Release("a")
	a.Release("a")
	check("released (twice)", 0, 0)
	if w := pass("b", "600m"); !w.Sync.Admitted {
		t.Error("pod b does not fit after a was released")
	}
	check("b admitted", 1, 600)
}
