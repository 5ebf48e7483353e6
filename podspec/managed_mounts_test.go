package podspec

import (
	"errors"
	"testing"

	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"
	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

func TestContainerConfigManagedMounts(t *testing.T) {
	node := &Node{RootDir: "/var/lib/podline", LogsDir: "/var/log/pods", DNS: DNS{ClusterDomain: "cluster.local"}}
	f := func(name string, mutate func(*v1.Pod), podIPs []string, want ...*runtimeapi.Mount) {
		t.Helper()
		pod := unitPod(mutate)
		cfg, err := ContainerConfig(pod, Instance{Spec: &pod.Spec.Containers[0], Attempt: 4}, "img", podIPs, node)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got := cfg.GetMounts()
		if len(got) != len(want) {
			t.Fatalf("%s: %d mounts %v, want %d", name, len(got), got, len(want))
		}
		for i := range want {
			if !proto.Equal(got[i], want[i]) {
				t.Errorf("%s: mount %d\n got %s\nwant %s", name, i, prototext.Format(got[i]), prototext.Format(want[i]))
			}
		}
	}
	hosts := &runtimeapi.Mount{ContainerPath: "/etc/hosts", HostPath: "/var/lib/podline/pods/uid-web/etc-hosts"}
	termLog := func(containerPath string) *runtimeapi.Mount {
		return &runtimeapi.Mount{ContainerPath: containerPath,
			HostPath: "/var/lib/podline/pods/uid-web/containers/app/termination-message-4"}
	}
	withPath := func(path string) func(*v1.Pod) {
		return func(p *v1.Pod) { p.Spec.Containers[0].TerminationMessagePath = path }
	}
	f("no address yet, no termination path", nil, nil)
	f("the hosts file once the sandbox has an address", nil, []string{"10.88.0.5"}, hosts)
	f("host network: the hosts file and the termination log", func(p *v1.Pod) {
		p.Spec.HostNetwork = true
		withPath("/dev/termination-log")(p)
	}, []string{"192.0.2.10"}, hosts, termLog("/dev/termination-log"))
	f("a relative termination path is from the root", withPath("tmp/../msg"), nil, termLog("/msg"))
	f("volume mounts first", func(p *v1.Pod) {
		withPath("/dev/termination-log")(p)
		p.Spec.Volumes = []v1.Volume{{Name: "h", VolumeSource: v1.VolumeSource{HostPath: &v1.HostPathVolumeSource{Path: "/srv/hosts"}}}}
		p.Spec.Containers[0].VolumeMounts = []v1.VolumeMount{{Name: "h", MountPath: "/etc/hosts"}}
	}, []string{"10.88.0.5"},
		&runtimeapi.Mount{ContainerPath: "/etc/hosts", HostPath: "/srv/hosts"}, termLog("/dev/termination-log"))
}

func TestContainerConfigRefusesBadHostnames(t *testing.T) {
	node := &Node{RootDir: "/var/lib/podline"}
	f := func(name string, mutate func(*v1.Pod), podIPs []string) {
		t.Helper()
		pod := unitPod(mutate)
		_, err := ContainerConfig(pod, Instance{Spec: &pod.Spec.Containers[0]}, "img", podIPs, node)
		if !errors.Is(err, ErrConfig) {
			t.Errorf("%s: error %v, want ErrConfig", name, err)
		}
	}
	f("hostname", func(p *v1.Pod) { p.Spec.Hostname = "UPPER" }, nil)
	f("subdomain, host network", func(p *v1.Pod) { p.Spec.Subdomain, p.Spec.HostNetwork = "a_b", true }, nil)
	f("host alias", func(p *v1.Pod) { p.Spec.HostAliases = []v1.HostAlias{{IP: "nope"}} }, []string{"10.88.0.5"})
}
