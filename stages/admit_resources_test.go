package stages

import (
	"reflect"
	"strconv"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"
)

// rl builds a resource list from name, quantity pairs.
func rl(kv ...string) v1.ResourceList {
	out := v1.ResourceList{}
	for i := 0; i < len(kv); i += 2 {
		out[v1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return out
}

func TestPodRequest(t *testing.T) {
	f := func(name string, apps, inits []v1.ResourceRequirements, mutate func(*v1.Pod), want Request) {
		t.Helper()
		pod := unitPod(func(p *v1.Pod) {
			p.Spec.Containers, p.Spec.InitContainers = nil, nil
			for _, r := range apps {
				p.Spec.Containers = append(p.Spec.Containers, v1.Container{Name: "app", Resources: r})
			}
			for _, r := range inits {
				p.Spec.InitContainers = append(p.Spec.InitContainers, v1.Container{Name: "init", Resources: r})
			}
		}, mutate)
		if got := PodRequest(pod); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %+v, want %+v", name, got, want)
		}
	}
	r := testResources
	req := func(kv ...string) v1.ResourceRequirements { return v1.ResourceRequirements{Requests: rl(kv...)} }
	lim := func(kv ...string) v1.ResourceRequirements { return v1.ResourceRequirements{Limits: rl(kv...)} }

	f("nothing requested", []v1.ResourceRequirements{{}}, nil, nil, Request{})
	f("app containers add up",
		[]v1.ResourceRequirements{r("250m", "64Mi", "", ""), r("500m", "128Mi", "", "")}, nil, nil,
		Request{CPUMilli: 750, MemoryBytes: 192 << 20})
	f("a limit alone counts as the request",
		[]v1.ResourceRequirements{r("", "", "1", "1Gi"), r("100m", "", "2", "")}, nil, nil,
		Request{CPUMilli: 1100, MemoryBytes: 1 << 30})
	f("the largest init container wins when it is more than the apps",
		[]v1.ResourceRequirements{r("100m", "64Mi", "", "")},
		[]v1.ResourceRequirements{r("2", "32Mi", "", ""), r("1", "16Mi", "", "")}, nil,
		Request{CPUMilli: 2000, MemoryBytes: 64 << 20})
	f("init containers run one at a time: their max, not their sum",
		[]v1.ResourceRequirements{r("100m", "", "", "")},
		[]v1.ResourceRequirements{r("300m", "", "", ""), r("400m", "512Mi", "", "")}, nil,
		Request{CPUMilli: 400, MemoryBytes: 512 << 20})
	f("ephemeral storage, hugepages and extended resources",
		[]v1.ResourceRequirements{
			req("ephemeral-storage", "1Gi", "hugepages-2Mi", "4Mi", "example.com/gpu", "1"),
			lim("example.com/gpu", "2", "ephemeral-storage", "512Mi"),
		},
		[]v1.ResourceRequirements{req("example.com/gpu", "3", "hugepages-2Mi", "2Mi")}, nil,
		Request{EphemeralStorageBytes: 1<<30 + 512<<20,
			Scalars: map[v1.ResourceName]int64{"hugepages-2Mi": 4 << 20, "example.com/gpu": 3}})
	f("kubernetes.io/ and attachable-volumes- resources count; other names do not",
		[]v1.ResourceRequirements{req("kubernetes.io/widget", "2", "attachable-volumes-csi-x", "1",
			"pods", "3", "storage", "1Gi", "requests.example.com/gpu", "1")}, nil, nil,
		Request{Scalars: map[v1.ResourceName]int64{"kubernetes.io/widget": 2, "attachable-volumes-csi-x": 1}})
	f("a zero request is no request",
		[]v1.ResourceRequirements{req("example.com/gpu", "0", "cpu", "0")}, nil, nil, Request{})
	f("memory rounds up to the byte",
		[]v1.ResourceRequirements{req("memory", "1500m")}, nil, nil, Request{MemoryBytes: 2})

	// Sidecars run beside the app containers: their requests add up; an
	// ordinary init container runs beside the sidecars before it.
	sidecar := func(idx ...int) func(*v1.Pod) {
		return func(p *v1.Pod) {
			for _, i := range idx {
				p.Spec.InitContainers[i].RestartPolicy = ptrOf(v1.ContainerRestartPolicyAlways)
			}
		}
	}
	f("a sidecar adds to the app containers",
		[]v1.ResourceRequirements{r("100m", "", "", "")}, []v1.ResourceRequirements{r("200m", "", "", "")}, sidecar(0),
		Request{CPUMilli: 300})
	f("an init container after a sidecar runs beside it",
		[]v1.ResourceRequirements{r("100m", "16Mi", "", "")},
		[]v1.ResourceRequirements{r("200m", "64Mi", "", ""), r("500m", "32Mi", "", "")}, sidecar(0),
		Request{CPUMilli: 700, MemoryBytes: 96 << 20})
	f("an init container before a sidecar runs alone",
		[]v1.ResourceRequirements{r("100m", "", "", "")},
		[]v1.ResourceRequirements{r("500m", "", "", ""), r("200m", "", "", "")}, sidecar(1),
		Request{CPUMilli: 500})
	f("sidecars' extended resources add up too",
		[]v1.ResourceRequirements{req("example.com/gpu", "1")},
		[]v1.ResourceRequirements{req("example.com/gpu", "1"), req("example.com/gpu", "1")}, sidecar(0, 1),
		Request{Scalars: map[v1.ResourceName]int64{"example.com/gpu": 3}})

	podLevel := func(r v1.ResourceRequirements) func(*v1.Pod) {
		return func(p *v1.Pod) { p.Spec.Resources = &r }
	}
	f("a pod-level request replaces the containers' for cpu and memory",
		[]v1.ResourceRequirements{r("100m", "64Mi", "", ""), req("ephemeral-storage", "1Gi")}, nil,
		podLevel(req("cpu", "2", "memory", "1Gi", "ephemeral-storage", "5Gi")),
		Request{CPUMilli: 2000, MemoryBytes: 1 << 30, EphemeralStorageBytes: 1 << 30})
	f("a pod-level limit alone stands for the request where no container requests",
		[]v1.ResourceRequirements{r("100m", "", "", "")}, nil,
		podLevel(lim("cpu", "4", "memory", "2Gi")),
		Request{CPUMilli: 100, MemoryBytes: 2 << 30})
	f("a pod-level hugepages limit is the request even where containers request some",
		[]v1.ResourceRequirements{req("hugepages-2Mi", "2Mi")}, nil,
		podLevel(lim("hugepages-2Mi", "8Mi")),
		Request{Scalars: map[v1.ResourceName]int64{"hugepages-2Mi": 8 << 20}})
	f("the overhead is added",
		[]v1.ResourceRequirements{r("100m", "64Mi", "", "")}, nil,
		func(p *v1.Pod) { p.Spec.Overhead = rl("cpu", "250m", "memory", "120Mi") },
		Request{CPUMilli: 350, MemoryBytes: 184 << 20})
}

func TestFitResources(t *testing.T) {
	node := &Node{Name: "node-a", CPUMilli: 4000, MemoryBytes: 8 << 30, MaxPods: 110,
		Allocatable: rl("cpu", "4", "memory", "8Gi", "pods", "110", "ephemeral-storage", "10Gi",
			"example.com/gpu", "2", "hugepages-1Gi", "2Gi")}
	f := func(name string, want Request, used Request, pods int, rej *Rejection) {
		t.Helper()
		l := ledgerOf(used, pods)
		if got := fitResources(&want, node, l); !reflect.DeepEqual(got, rej) {
			t.Errorf("%s:\n got %+v\nwant %+v", name, got, rej)
		}
	}
	out := func(res string, requested, used, capacity int64) *Rejection {
		return outOf(v1.ResourceName(res), requested, used, capacity)
	}

	f("fits", Request{CPUMilli: 500, MemoryBytes: 1 << 30}, Request{CPUMilli: 3500, MemoryBytes: 7 << 30}, 109, nil)
	f("best-effort pod on a full node", Request{}, Request{CPUMilli: 4000, MemoryBytes: 8 << 30}, 50, nil)
	f("pod count", Request{}, Request{}, 110, out("pods", 1, 110, 110))
	f("pods are checked before cpu", Request{CPUMilli: 8000}, Request{}, 110, out("pods", 1, 110, 110))
	f("cpu", Request{CPUMilli: 600, MemoryBytes: 1 << 30}, Request{CPUMilli: 3500}, 3, out("cpu", 600, 3500, 4000))
	f("cpu is checked before memory", Request{CPUMilli: 8000, MemoryBytes: 16 << 30}, Request{}, 0, out("cpu", 8000, 0, 4000))
	f("memory", Request{CPUMilli: 100, MemoryBytes: 2 << 30}, Request{CPUMilli: 100, MemoryBytes: 7 << 30}, 3,
		out("memory", 2<<30, 7<<30, 8<<30))
	f("ephemeral storage", Request{EphemeralStorageBytes: 4 << 30}, Request{EphemeralStorageBytes: 7 << 30}, 1,
		out("ephemeral-storage", 4<<30, 7<<30, 10<<30))
	f("ephemeral storage exactly fills", Request{EphemeralStorageBytes: 3 << 30}, Request{EphemeralStorageBytes: 7 << 30}, 1, nil)
	f("memory is checked before ephemeral storage", Request{MemoryBytes: 9 << 30, EphemeralStorageBytes: 11 << 30}, Request{}, 0,
		out("memory", 9<<30, 0, 8<<30))
	gpus := func(n int64) Request { return Request{Scalars: map[v1.ResourceName]int64{"example.com/gpu": n}} }
	f("an advertised extended resource fits", gpus(1), gpus(1), 1, nil)
	f("an advertised extended resource runs out", gpus(2), gpus(1), 1, out("example.com/gpu", 2, 1, 2))
	f("an extended resource the node does not advertise is not checked",
		Request{Scalars: map[v1.ResourceName]int64{"vendor.example/fpga": 4}}, Request{}, 0, nil)
	f("hugepages the node has", Request{Scalars: map[v1.ResourceName]int64{"hugepages-1Gi": 1 << 30}}, Request{}, 0, nil)
	f("hugepages the node has none of", Request{Scalars: map[v1.ResourceName]int64{"hugepages-2Mi": 2 << 20}}, Request{}, 0,
		out("hugepages-2Mi", 2<<20, 0, 0))
	f("a kubernetes.io/ resource the node does not advertise is checked against zero",
		Request{Scalars: map[v1.ResourceName]int64{"kubernetes.io/widget": 1}}, Request{}, 0, out("kubernetes.io/widget", 1, 0, 0))
	f("ephemeral storage is checked before the scalars, and those by name",
		Request{EphemeralStorageBytes: 20 << 30, Scalars: map[v1.ResourceName]int64{"hugepages-2Mi": 1, "example.com/gpu": 3}},
		Request{}, 0, out("ephemeral-storage", 20<<30, 0, 10<<30))
	f("scalars by name", Request{Scalars: map[v1.ResourceName]int64{"hugepages-2Mi": 1, "example.com/gpu": 3}},
		Request{}, 0, out("example.com/gpu", 3, 0, 2))

	unlimited := &Node{CPUMilli: 4000, MemoryBytes: 8 << 30}
	if rej := fitResources(&Request{}, unlimited, ledgerOf(Request{}, 100000)); rej != nil {
		t.Errorf("MaxPods 0 means no pod limit, got %+v", rej)
	}
	noStorage := &Node{CPUMilli: 4000, MemoryBytes: 8 << 30}
	if rej := fitResources(&Request{EphemeralStorageBytes: 1}, noStorage, &Ledger{}); !reflect.DeepEqual(rej, out("ephemeral-storage", 1, 0, 0)) {
		t.Errorf("a node without allocatable ephemeral-storage: %+v", rej)
	}
}

// ledgerOf is a ledger of pods admitted pods that together use used.
func ledgerOf(used Request, pods int) *Ledger {
	l := &Ledger{pods: make(map[types.UID]holding, pods), used: used.clone()}
	for i := range pods {
		l.pods[types.UID("uid-"+strconv.Itoa(i))] = holding{}
	}
	return l
}
