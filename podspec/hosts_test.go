package podspec

import (
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
)

const wantLocalhost = "# Kubernetes-managed hosts file.\n" +
	"127.0.0.1\tlocalhost\n" +
	"::1\tlocalhost ip6-localhost ip6-loopback\n" +
	"fe00::0\tip6-localnet\n" +
	"fe00::0\tip6-mcastprefix\n" +
	"fe00::1\tip6-allnodes\n" +
	"fe00::2\tip6-allrouters\n"

func TestHostsFile(t *testing.T) {
	f := func(name string, mutate func(*v1.Pod), clusterDomain string, podIPs []string, nodeHosts, want string) {
		t.Helper()
		node := &Node{DNS: DNS{ClusterDomain: clusterDomain}}
		got, err := HostsFile(unitPod(mutate), podIPs, node, []byte(nodeHosts))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if string(got) != want {
			t.Errorf("%s:\n got %q\nwant %q", name, got, want)
		}
	}
	aliases := func(p *v1.Pod) {
		p.Spec.HostAliases = []v1.HostAlias{
			{IP: "192.0.2.1", Hostnames: []string{"foo.local", "bar.local"}},
			{IP: "2001:db8::1", Hostnames: []string{"v6.local"}},
		}
	}
	const wantAliases = "\n# Entries added by HostAliases.\n" +
		"192.0.2.1\tfoo.local\tbar.local\n" +
		"2001:db8::1\tv6.local\n"
	sub := func(p *v1.Pod) { p.Spec.Hostname, p.Spec.Subdomain = "db-0", "db" }

	f("pod network, the pod name", nil, "cluster.local", []string{"10.88.0.5"}, "",
		wantLocalhost+"10.88.0.5\tweb\n")
	f("spec.hostname", func(p *v1.Pod) { p.Spec.Hostname = "db-0" }, "cluster.local", []string{"10.88.0.5"}, "",
		wantLocalhost+"10.88.0.5\tdb-0\n")
	f("subdomain: the FQDN first", sub, "cluster.local", []string{"10.88.0.5"}, "",
		wantLocalhost+"10.88.0.5\tdb-0.db.default.svc.cluster.local\tdb-0\n")
	f("subdomain without a cluster domain", sub, "", []string{"10.88.0.5"}, "",
		wantLocalhost+"10.88.0.5\tdb-0.db.default.svc.\tdb-0\n")
	f("setHostnameAsFQDN changes nothing here", func(p *v1.Pod) { sub(p); p.Spec.SetHostnameAsFQDN = ptrOf(true) },
		"cluster.local", []string{"10.88.0.5"}, "", wantLocalhost+"10.88.0.5\tdb-0.db.default.svc.cluster.local\tdb-0\n")
	f("dual stack: a line per address, in order", sub, "cluster.local", []string{"10.88.0.5", "fd00::5"}, "",
		wantLocalhost+"10.88.0.5\tdb-0.db.default.svc.cluster.local\tdb-0\n"+
			"fd00::5\tdb-0.db.default.svc.cluster.local\tdb-0\n")
	f("host aliases after the pod's entries", aliases, "cluster.local", []string{"10.88.0.5"}, "",
		wantLocalhost+"10.88.0.5\tweb\n"+wantAliases)
	f("an alias without names", func(p *v1.Pod) { p.Spec.HostAliases = []v1.HostAlias{{IP: "192.0.2.9"}} },
		"", []string{"10.88.0.5"}, "", wantLocalhost+"10.88.0.5\tweb\n\n# Entries added by HostAliases.\n192.0.2.9\t\n")

	const node = "127.0.0.1 localhost\n192.0.2.10 node-a\n"
	hostNet := func(p *v1.Pod) { p.Spec.HostNetwork = true }
	f("host network: the node's file", hostNet, "cluster.local", []string{"192.0.2.10"}, node,
		"# Kubernetes-managed hosts file (host network).\n"+node)
	f("host network with aliases", func(p *v1.Pod) { hostNet(p); aliases(p) }, "cluster.local", []string{"192.0.2.10"}, node,
		"# Kubernetes-managed hosts file (host network).\n"+node+wantAliases)
	f("host network: the node's file as it is, last line unended", func(p *v1.Pod) { hostNet(p); aliases(p) }, "", nil,
		"10.0.0.1 a", "# Kubernetes-managed hosts file (host network).\n10.0.0.1 a"+wantAliases)
}

func TestHostsFileRefuses(t *testing.T) {
	f := func(name string, mutate func(*v1.Pod), want string) {
		t.Helper()
		_, err := HostsFile(unitPod(mutate), []string{"10.88.0.5"}, &Node{}, nil)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want one containing %q", name, err, want)
		}
	}
	f("alias IP", func(p *v1.Pod) {
		p.Spec.HostAliases = []v1.HostAlias{{IP: "10.0.0.1\n6.6.6.6", Hostnames: []string{"a"}}}
	}, "spec.hostAliases[0].ip: Invalid value")
	f("alias name with a line break", func(p *v1.Pod) {
		p.Spec.HostAliases = []v1.HostAlias{{IP: "10.0.0.1", Hostnames: []string{"a", "b\n6.6.6.6 c"}}}
	}, "spec.hostAliases[0].hostnames[1]: Invalid value")
	f("bad hostname", func(p *v1.Pod) { p.Spec.Hostname = "a b" }, `pod Hostname "a b" is not a valid DNS label`)
}

func TestMountsHostsFile(t *testing.T) {
	f := func(name string, mutate func(*v1.Pod), podIPs []string, want bool) {
		t.Helper()
		pod := unitPod(mutate)
		if got := MountsHostsFile(pod, &pod.Spec.Containers[0], podIPs); got != want {
			t.Errorf("%s: %v, want %v", name, got, want)
		}
	}
	f("pod network with an address", nil, []string{"10.88.0.5"}, true)
	f("pod network without an address yet", nil, nil, false)
	f("host network", func(p *v1.Pod) { p.Spec.HostNetwork = true }, nil, true)
	f("the container mounts its own", func(p *v1.Pod) {
		p.Spec.Containers[0].VolumeMounts = []v1.VolumeMount{{Name: "h", MountPath: "/etc/hosts"}}
	}, []string{"10.88.0.5"}, false)
}
