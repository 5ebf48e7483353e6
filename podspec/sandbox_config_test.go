package podspec

import (
	"reflect"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"
	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podline/podline/cgroupfs"
	"github.com/podline/podline/cri"
)

var sandboxNode = &Node{
	Name: "node-a", IPs: []string{"192.0.2.10"}, LogsDir: "/var/log/pods",
	Cgroups: cgroupfs.Layout{Root: "/", PerQOS: true},
	DNS:     DNS{ClusterDNS: []string{"10.96.0.10"}, ClusterDomain: "cluster.local"},
}

func TestSandboxConfig(t *testing.T) {
	pod := unitPod(func(p *v1.Pod) {
		p.Labels = map[string]string{"app": "web", cri.LabelPodName: "spoofed"}
		p.Annotations = map[string]string{"owner": "team-a"}
		p.Spec.SecurityContext = &v1.PodSecurityContext{
			RunAsUser: ptrOf(int64(1000)), RunAsGroup: ptrOf(int64(3000)), SupplementalGroups: []int64{4000},
			Sysctls: []v1.Sysctl{{Name: "net.ipv4.ip_unprivileged_port_start", Value: "0"}},
		}
	})
	cfg := SandboxConfig(pod, 2, sandboxNode)
	want := &runtimeapi.PodSandboxConfig{
		Metadata:     &runtimeapi.PodSandboxMetadata{Name: "web", Namespace: "default", Uid: "uid-web", Attempt: 2},
		Hostname:     "web",
		LogDirectory: "/var/log/pods/default_web_uid-web",
		DnsConfig: &runtimeapi.DNSConfig{Servers: []string{"10.96.0.10"},
			Searches: []string{"default.svc.cluster.local", "svc.cluster.local", "cluster.local"}, Options: []string{"ndots:5"}},
		Labels: map[string]string{"app": "web",
			cri.LabelPodName: "web", cri.LabelPodNamespace: "default", cri.LabelPodUID: "uid-web"},
		Annotations: map[string]string{"owner": "team-a"},
		Linux: &runtimeapi.LinuxPodSandboxConfig{
			CgroupParent: "/kubepods/besteffort/poduid-web",
			SecurityContext: &runtimeapi.LinuxSandboxSecurityContext{
				NamespaceOptions: &runtimeapi.NamespaceOption{Network: runtimeapi.NamespaceMode_POD,
					Pid: runtimeapi.NamespaceMode_CONTAINER, Ipc: runtimeapi.NamespaceMode_POD},
				RunAsUser: &runtimeapi.Int64Value{Value: 1000}, RunAsGroup: &runtimeapi.Int64Value{Value: 3000},
				SupplementalGroups: []int64{4000},
				Seccomp:            &runtimeapi.SecurityProfile{ProfileType: runtimeapi.SecurityProfile_RuntimeDefault},
			},
			Sysctls: map[string]string{"net.ipv4.ip_unprivileged_port_start": "0"},
		},
	}
	if !proto.Equal(cfg, want) {
		t.Errorf("sandbox config:\n got %s\nwant %s", prototext.Format(cfg), prototext.Format(want))
	}
	cfg.Annotations["owner"] = "changed"
	if pod.Annotations["owner"] != "team-a" {
		t.Error("the sandbox annotations share the pod's map")
	}
}

func TestPodHostname(t *testing.T) {
	f := func(name, podName, hostname string, hostNet bool, want string) {
		t.Helper()
		pod := unitPod(func(p *v1.Pod) {
			p.Name, p.Spec.Hostname, p.Spec.HostNetwork = podName, hostname, hostNet
		})
		if got := SandboxConfig(pod, 0, sandboxNode).GetHostname(); got != want {
			t.Errorf("%s: hostname %q, want %q", name, got, want)
		}
	}
	long := strings.Repeat("a", 70)
	f("pod name", "web", "", false, "web")
	f("spec.hostname wins", "web", "frontend", false, "frontend")
	f("host network gets none", "web", "frontend", true, "")
	f("cut to 63", long, "", false, long[:63])
	f("exactly 63 kept", long[:63], "", false, long[:63])
	f("cut, then trailing dashes and dots dropped", strings.Repeat("b", 60)+"-.-x", "", false, strings.Repeat("b", 60))
}

func TestPortMappings(t *testing.T) {
	pod := unitPod(withApps("a", "b"), func(p *v1.Pod) {
		p.Spec.Containers[0].Ports = []v1.ContainerPort{
			{ContainerPort: 80},
			{ContainerPort: 8080, HostPort: 30080, Protocol: v1.ProtocolTCP},
			{ContainerPort: 53, HostPort: 5353, Protocol: v1.ProtocolUDP, HostIP: "192.0.2.10"},
		}
		p.Spec.Containers[1].Ports = []v1.ContainerPort{{ContainerPort: 9000, HostPort: 9000, Protocol: v1.ProtocolSCTP}}
	})
	got := SandboxConfig(pod, 0, sandboxNode).GetPortMappings()
	want := []*runtimeapi.PortMapping{
		{Protocol: runtimeapi.Protocol_TCP, ContainerPort: 8080, HostPort: 30080},
		{Protocol: runtimeapi.Protocol_UDP, ContainerPort: 53, HostPort: 5353, HostIp: "192.0.2.10"},
		{Protocol: runtimeapi.Protocol_SCTP, ContainerPort: 9000, HostPort: 9000},
	}
	if len(got) != len(want) {
		t.Fatalf("%d port mappings, want %d: %v", len(got), len(want), got)
	}
	for i := range want {
		if !proto.Equal(got[i], want[i]) {
			t.Errorf("mapping %d: %v, want %v", i, got[i], want[i])
		}
	}
}

func TestNamespaceOptions(t *testing.T) {
	const pod, node, ctr = runtimeapi.NamespaceMode_POD, runtimeapi.NamespaceMode_NODE, runtimeapi.NamespaceMode_CONTAINER
	f := func(name string, mutate func(*v1.PodSpec), network, pid, ipc runtimeapi.NamespaceMode) {
		t.Helper()
		p := unitPod(func(p *v1.Pod) { mutate(&p.Spec) })
		want := &runtimeapi.NamespaceOption{Network: network, Pid: pid, Ipc: ipc}
		sandbox := SandboxConfig(p, 0, sandboxNode).GetLinux().GetSecurityContext().GetNamespaceOptions()
		if !proto.Equal(sandbox, want) {
			t.Errorf("%s: sandbox %v, want %v", name, sandbox, want)
		}
		if c := containerSecurity(p, &p.Spec.Containers[0], sandboxNode).GetNamespaceOptions(); !proto.Equal(c, want) {
			t.Errorf("%s: container %v, want %v", name, c, want)
		}
	}
	share := func(v bool) *bool { return &v }
	f("defaults: own pid namespace per container", func(*v1.PodSpec) {}, pod, ctr, pod)
	f("host network", func(s *v1.PodSpec) { s.HostNetwork = true }, node, ctr, pod)
	f("shared process namespace", func(s *v1.PodSpec) { s.ShareProcessNamespace = share(true) }, pod, pod, pod)
	f("shareProcessNamespace false", func(s *v1.PodSpec) { s.ShareProcessNamespace = share(false) }, pod, ctr, pod)
	f("host PID wins over sharing", func(s *v1.PodSpec) { s.HostPID, s.ShareProcessNamespace = true, share(true) }, pod, node, pod)
	f("host IPC", func(s *v1.PodSpec) { s.HostIPC = true }, pod, ctr, node)
	f("everything from the host", func(s *v1.PodSpec) { s.HostNetwork, s.HostPID, s.HostIPC = true, true, true }, node, node, node)
}

func TestSandboxCgroupParentAndPrivilege(t *testing.T) {
	f := func(name string, node *Node, mutate func(*v1.Pod), parent string, privileged bool) {
		t.Helper()
		linux := SandboxConfig(unitPod(mutate), 0, node).GetLinux()
		if linux.GetCgroupParent() != parent || linux.GetSecurityContext().GetPrivileged() != privileged {
			t.Errorf("%s: cgroup parent %q privileged %v, want %q %v", name,
				linux.GetCgroupParent(), linux.GetSecurityContext().GetPrivileged(), parent, privileged)
		}
	}
	res := func(r v1.ResourceRequirements) func(*v1.Pod) {
		return func(p *v1.Pod) { p.Spec.Containers[0].Resources = r }
	}
	yes := true
	f("best effort", sandboxNode, nil, "/kubepods/besteffort/poduid-web", false)
	f("burstable", sandboxNode, res(testResources("100m", "", "", "")), "/kubepods/burstable/poduid-web", false)
	f("guaranteed", sandboxNode, res(testResources("1", "1Gi", "1", "1Gi")), "/kubepods/poduid-web", false)
	noQOS := *sandboxNode
	noQOS.Cgroups = cgroupfs.Layout{}
	f("no per-QoS cgroups: the runtime decides", &noQOS, nil, "", false)
	f("a privileged init container makes the sandbox privileged", sandboxNode, func(p *v1.Pod) {
		p.Spec.InitContainers = []v1.Container{{Name: "init", SecurityContext: &v1.SecurityContext{Privileged: &yes}}}
	}, "/kubepods/besteffort/poduid-web", true)
	f("a privileged app container too", sandboxNode, func(p *v1.Pod) {
		p.Spec.Containers[0].SecurityContext = &v1.SecurityContext{Privileged: &yes}
	}, "/kubepods/besteffort/poduid-web", true)
}

func TestSandboxConfigNoSecurityContext(t *testing.T) {
	cfg := SandboxConfig(unitPod(func(p *v1.Pod) { p.Labels = nil; p.Annotations = nil }), 0, sandboxNode)
	sec := cfg.GetLinux().GetSecurityContext()
	if sec.GetRunAsUser() != nil || sec.GetRunAsGroup() != nil || len(cfg.GetLinux().GetSysctls()) != 0 {
		t.Errorf("no pod security context, got %s", prototext.Format(cfg.GetLinux()))
	}
	if want := map[string]string{cri.LabelPodName: "web", cri.LabelPodNamespace: "default", cri.LabelPodUID: "uid-web"}; !reflect.DeepEqual(cfg.GetLabels(), want) {
		t.Errorf("labels %v, want only the identity labels %v", cfg.GetLabels(), want)
	}
}
