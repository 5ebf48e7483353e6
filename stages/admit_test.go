package stages

import (
	"reflect"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podline/podline/sysctl"
)

func TestAdmit(t *testing.T) {
	allow, err := sysctl.NewAllowlist("6.18.0", nil)
	if err != nil {
		t.Fatal(err)
	}
	node := &AdmitNode{
		Node: &Node{Name: "node-a", CPUMilli: 4000, MemoryBytes: 8 << 30, MaxPods: 110,
			Allocatable: rl("cpu", "4", "memory", "8Gi", "pods", "110", "ephemeral-storage", "10Gi")},
		Labels:  map[string]string{"disk": "ssd", "zone": "a"},
		Taints:  []v1.Taint{{Key: "dedicated", Value: "db", Effect: v1.TaintEffectNoExecute}},
		Sysctls: allow,
	}
	// A pod holding host port 8080 and 3 of the 4 cpus.
	holder := unitPod(func(p *v1.Pod) {
		p.UID = "uid-holder"
		p.Spec.Containers[0].Resources = testResources("3", "", "", "")
		p.Spec.Containers[0].Ports = []v1.ContainerPort{{ContainerPort: 80, HostPort: 8080}}
	})
	admitted := &Ledger{}
	admitted.Add(holder)

	f := func(name string, pod *v1.Pod, want *Rejection) {
		t.Helper()
		if got := Admit(pod, node, admitted); !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\n got %+v\nwant %+v", name, got, want)
		}
	}
	tolerant := func(p *v1.Pod) {
		p.Spec.Tolerations = []v1.Toleration{{Key: "dedicated", Operator: v1.TolerationOpExists}}
	}
	pod := func(mutate ...func(*v1.Pod)) *v1.Pod { return unitPod(append([]func(*v1.Pod){tolerant}, mutate...)...) }
	cpu := func(q string) func(*v1.Pod) {
		return func(p *v1.Pod) { p.Spec.Containers[0].Resources = testResources(q, "", "", "") }
	}
	port := func(hp int32) func(*v1.Pod) {
		return func(p *v1.Pod) { p.Spec.Containers[0].Ports = []v1.ContainerPort{{ContainerPort: 80, HostPort: hp}} }
	}
	selector := func(sel map[string]string) func(*v1.Pod) { return func(p *v1.Pod) { p.Spec.NodeSelector = sel } }
	sysctls := func(names ...string) func(*v1.Pod) {
		return func(p *v1.Pod) {
			p.Spec.SecurityContext = &v1.PodSecurityContext{}
			for _, n := range names {
				p.Spec.SecurityContext.Sysctls = append(p.Spec.SecurityContext.Sysctls, v1.Sysctl{Name: n, Value: "1"})
			}
		}
	}
	osLabel := func(p *v1.Pod) { p.Labels = map[string]string{"kubernetes.io/os": "windows"} }
	noTaint := func(p *v1.Pod) { p.Spec.Tolerations = nil }
	otherNode := func(p *v1.Pod) { p.Spec.NodeName = "node-b" }

	var (
		forbidden = &Rejection{Reason: "SysctlForbidden", Message: `forbidden sysctl: "net.core.somaxconn" not allowlisted`}
		osLbl     = &Rejection{Reason: "PodOSSelectorNodeLabelDoesNotMatch",
			Message: "Failed to admit pod as the `kubernetes.io/os` label doesn't match node label"}
		osField = &Rejection{Reason: "PodOSNotSupported", Message: "Failed to admit pod as the OS field doesn't match node OS"}
		outCPU  = &Rejection{Reason: "OutOfcpu",
			Message: "Node didn't have enough resource: cpu, requested: 2000, used: 3000, capacity: 4000"}
		affinity = &Rejection{Reason: "NodeAffinity",
			Message: "Predicate NodeAffinity failed: node(s) didn't match Pod's node affinity/selector"}
		nodeName = &Rejection{Reason: "NodeName",
			Message: "Predicate NodeName failed: node(s) didn't match the requested node name"}
		ports = &Rejection{Reason: "NodePorts",
			Message: "Predicate NodePorts failed: node(s) didn't have free ports for the requested pod ports"}
		taint = &Rejection{Reason: "TaintToleration",
			Message: "Predicate TaintToleration failed: node(s) had taints that the pod didn't tolerate"}
	)

	f("fits", pod(cpu("1"), port(9090), selector(map[string]string{"disk": "ssd"}),
		sysctls("net.ipv4.ip_local_port_range"), func(p *v1.Pod) { p.Spec.NodeName = "node-a" }), nil)
	f("sysctl", pod(sysctls("net.core.somaxconn")), forbidden)
	f("os label", pod(osLabel), osLbl)
	f("os field", pod(func(p *v1.Pod) { p.Spec.OS = &v1.PodOS{Name: v1.Windows} }), osField)
	f("linux is this node's os", pod(func(p *v1.Pod) {
		p.Labels = map[string]string{"kubernetes.io/os": "linux"}
		p.Spec.OS = &v1.PodOS{Name: v1.Linux}
	}), nil)
	f("resources", pod(cpu("2")), outCPU)
	f("selector", pod(selector(map[string]string{"disk": "hdd"})), affinity)
	f("node name", pod(otherNode), nodeName)
	f("host port", pod(port(8080)), ports)
	f("taint", pod(noTaint), taint)
	f("a static pod is not barred by taints", pod(noTaint, func(p *v1.Pod) {
		p.Annotations = map[string]string{"kubernetes.io/config.source": "file"}
	}), nil)
	f("an API pod is", pod(noTaint, func(p *v1.Pod) {
		p.Annotations = map[string]string{"kubernetes.io/config.source": "api"}
	}), taint)

	// Each check goes before the next, in the kubelet's order.
	all := []func(*v1.Pod){sysctls("net.core.somaxconn"), osLabel, cpu("2"),
		selector(map[string]string{"disk": "hdd"}), otherNode, port(8080), noTaint}
	order := []*Rejection{forbidden, osLbl, outCPU, affinity, nodeName, ports, taint}
	for i := range all {
		f("order: "+order[i].Reason, pod(all[i:]...), order[i])
	}
}

func TestAdmitterLedger(t *testing.T) {
	a := &Admitter{Node: &Node{CPUMilli: 1000, MemoryBytes: 1 << 30, MaxPods: 10}}
	pass := func(uid string, cpu string, hostPort int32) *Work {
		w := &Work{UID: types.UID(uid), Sync: &PodSync{},
			Pod: unitPod(func(p *v1.Pod) {
				p.UID = types.UID(uid)
				p.Spec.Containers[0].Resources = testResources(cpu, "", "", "")
				if hostPort > 0 {
					p.Spec.Containers[0].Ports = []v1.ContainerPort{{ContainerPort: 80, HostPort: hostPort}}
				}
			})}
		a.Handle(w)
		return w
	}
	check := func(what string, wantPods int, wantCPU int64) {
		t.Helper()
		if n, used := a.Admitted(); n != wantPods || used.CPUMilli != wantCPU {
			t.Errorf("%s: %d pods using %dm, want %d using %dm", what, n, used.CPUMilli, wantPods, wantCPU)
		}
	}
	rejected := func(w *Work, reason string) {
		t.Helper()
		if w.Sync.Admitted || w.Sync.Rejection == nil || w.Sync.Rejection.Reason != reason {
			t.Errorf("%s: admitted %v, rejection %+v, want %s", w.UID, w.Sync.Admitted, w.Sync.Rejection, reason)
		}
	}
	if w := pass("a", "600m", 8080); !w.Sync.Admitted || w.Sync.Rejection != nil {
		t.Fatalf("first pod not admitted: %+v", w.Sync)
	}
	check("one admitted", 1, 600)
	if w := pass("a", "600m", 8080); !w.Sync.Admitted {
		t.Error("an admitted pod passing again is still admitted")
	}
	check("same pod again counts once", 1, 600)
	rejected(pass("b", "600m", 0), "OutOfcpu")
	rejected(pass("c", "", 8080), "NodePorts")
	check("a rejected pod takes no share", 1, 600)
	a.Release("a")
	a.Release("a")
	check("released (twice)", 0, 0)
	if w := pass("b", "600m", 0); !w.Sync.Admitted {
		t.Error("pod b does not fit after a was released")
	}
	if w := pass("c", "", 8080); !w.Sync.Admitted {
		t.Error("the host port a held is not free after a was released")
	}
	check("b and c admitted", 2, 600)
}
