package stages

import (
	"reflect"
	"testing"

	v1 "k8s.io/api/core/v1"
)

func TestHostPorts(t *testing.T) {
	always := v1.ContainerRestartPolicyAlways
	pod := unitPod(func(p *v1.Pod) {
		p.Spec.InitContainers = []v1.Container{
			{Name: "setup", Ports: []v1.ContainerPort{{ContainerPort: 1, HostPort: 7001}}},
			{Name: "sidecar", RestartPolicy: &always, Ports: []v1.ContainerPort{{ContainerPort: 2, HostPort: 7002}}},
		}
		p.Spec.Containers[0].Ports = []v1.ContainerPort{
			{ContainerPort: 80},
			{ContainerPort: 80, HostPort: 8080},
			{ContainerPort: 53, HostPort: 53, Protocol: v1.ProtocolUDP, HostIP: "10.0.0.1"},
		}
	})
	want := []hostPort{
		{ip: "0.0.0.0", protocol: v1.ProtocolTCP, port: 7002},
		{ip: "0.0.0.0", protocol: v1.ProtocolTCP, port: 8080},
		{ip: "10.0.0.1", protocol: v1.ProtocolUDP, port: 53},
	}
	if got := hostPorts(pod); !reflect.DeepEqual(got, want) {
		t.Errorf("hostPorts:\n got %+v\nwant %+v", got, want)
	}
	if got := hostPorts(unitPod()); got != nil {
		t.Errorf("a pod without host ports: %+v", got)
	}
}

func TestPortSet(t *testing.T) {
	tcp := func(ip string, port int32) hostPort { return hostPort{ip: ip, protocol: v1.ProtocolTCP, port: port} }
	udp := func(ip string, port int32) hostPort { return hostPort{ip: ip, protocol: v1.ProtocolUDP, port: port} }
	var s portSet
	held := []hostPort{tcp("0.0.0.0", 80), tcp("10.0.0.1", 443), udp("10.0.0.1", 53)}
	s.add(held)
	f := func(name string, p hostPort, want bool) {
		t.Helper()
		if got := s.conflicts(p); got != want {
			t.Errorf("%s: conflicts(%+v) = %v, want %v", name, p, got, want)
		}
	}
	f("the same wildcard port", tcp("0.0.0.0", 80), true)
	f("an address under a held wildcard", tcp("10.0.0.2", 80), true)
	f("a wildcard over a held address", tcp("0.0.0.0", 443), true)
	f("the same address and port", tcp("10.0.0.1", 443), true)
	f("another address, same port", tcp("10.0.0.2", 443), false)
	f("another protocol", udp("0.0.0.0", 80), false)
	f("another protocol on a held address", tcp("10.0.0.1", 53), false)
	f("a wildcard over a held udp address", udp("0.0.0.0", 53), true)
	f("another port", tcp("0.0.0.0", 8080), false)
	if !s.conflictsAny([]hostPort{tcp("0.0.0.0", 8080), tcp("10.0.0.9", 80)}) || s.conflictsAny(nil) {
		t.Error("conflictsAny")
	}

	// Two holders of one address each (admitted before podline checked
	// ports, or given to it so): one leaving keeps it held.
	s.add([]hostPort{tcp("10.0.0.1", 443)})
	s.remove([]hostPort{tcp("10.0.0.1", 443)})
	f("still held by the other", tcp("0.0.0.0", 443), true)
	s.remove(held)
	for _, p := range held {
		f("released", p, false)
	}
	if len(s.exact) != 0 || len(s.any) != 0 {
		t.Errorf("counts left after every release: %v %v", s.exact, s.any)
	}
}
