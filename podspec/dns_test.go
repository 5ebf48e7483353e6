package podspec

import (
	"errors"
	"io/fs"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"
	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

func TestReadResolvConf(t *testing.T) {
	f := func(file string, want ResolvConf) {
		t.Helper()
		path := ""
		if file != "" {
			path = filepath.Join("testdata", file)
		}
		got, err := ReadResolvConf(path)
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\n got %+v\nwant %+v", file, got, want)
		}
	}
	f("", ResolvConf{})
	f("resolv-empty.conf", ResolvConf{})
	f("resolv.conf", ResolvConf{
		Servers:  []string{"192.0.2.53", "192.0.2.54", "2001:db8::53"},
		Searches: []string{"corp.example", "lab.example"},
		Options:  []string{"ndots:2", "timeout:1", "rotate"},
	})

	_, err := ReadResolvConf(filepath.Join(t.TempDir(), "missing"))
	if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "--resolv-conf") {
		t.Errorf("missing file: %v, want a not-exist error naming --resolv-conf", err)
	}
}

// systemd-resolved's stub file says "search ." when there is no search
// domain; the kubelet drops "." and trailing dots so they do not end up
// in every pod's search path.
func TestReadResolvConfRootSearch(t *testing.T) {
	got, err := ReadResolvConf(filepath.Join("testdata", "resolv-stub.conf"))
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"corp.example"}; !reflect.DeepEqual(got.Searches, want) {
		t.Errorf("searches %q, want %q", got.Searches, want)
	}
}

func TestDNSForPod(t *testing.T) {
	host := ResolvConf{
		Servers:  []string{"192.0.2.53"},
		Searches: []string{"corp.example"},
		Options:  []string{"ndots:2", "timeout:1"},
	}
	cluster := DNS{ClusterDNS: []string{"10.96.0.10"}, ClusterDomain: "cluster.local", Host: host}
	f := func(name string, d DNS, mutate func(*v1.Pod), want *runtimeapi.DNSConfig) {
		t.Helper()
		pod := unitPod(mutate)
		before := ResolvConf{Servers: slices.Clone(d.Host.Servers), Searches: slices.Clone(d.Host.Searches),
			Options: slices.Clone(d.Host.Options)}
		got := d.ForPod(pod)
		if !proto.Equal(got, want) {
			t.Errorf("%s:\n got %s\nwant %s", name, prototext.Format(got), prototext.Format(want))
		}
		if !reflect.DeepEqual(d.Host, before) {
			t.Errorf("%s: ForPod changed the host resolver config to %+v", name, d.Host)
		}
	}
	policy := func(p v1.DNSPolicy, hostNet bool) func(*v1.Pod) {
		return func(pod *v1.Pod) { pod.Spec.DNSPolicy, pod.Spec.HostNetwork = p, hostNet }
	}
	clusterFirst := &runtimeapi.DNSConfig{
		Servers:  []string{"10.96.0.10"},
		Searches: []string{"default.svc.cluster.local", "svc.cluster.local", "cluster.local", "corp.example"},
		Options:  []string{"ndots:5"},
	}
	hostCfg := &runtimeapi.DNSConfig{Servers: host.Servers, Searches: host.Searches, Options: host.Options}

	f("ClusterFirst", cluster, policy(v1.DNSClusterFirst, false), clusterFirst)
	f("unset policy is ClusterFirst", cluster, policy("", false), clusterFirst)
	f("ClusterFirst on the host network falls back to the host", cluster, policy(v1.DNSClusterFirst, true), hostCfg)
	f("ClusterFirstWithHostNet on the host network", cluster, policy(v1.DNSClusterFirstWithHostNet, true), clusterFirst)
	f("ClusterFirstWithHostNet off the host network", cluster, policy(v1.DNSClusterFirstWithHostNet, false), clusterFirst)
	f("Default", cluster, policy(v1.DNSDefault, false), hostCfg)
	f("None without dnsConfig", cluster, policy(v1.DNSNone, false), &runtimeapi.DNSConfig{})

	noClusterDNS := DNS{ClusterDomain: "cluster.local", Host: host}
	f("ClusterFirst without --cluster-dns falls back to the host", noClusterDNS, policy(v1.DNSClusterFirst, false), hostCfg)
	f("ClusterFirstWithHostNet without --cluster-dns falls back to the host", noClusterDNS,
		policy(v1.DNSClusterFirstWithHostNet, true), hostCfg)
	f("no resolver file at all", DNS{}, policy(v1.DNSDefault, false), &runtimeapi.DNSConfig{})

	noDomain := DNS{ClusterDNS: []string{"10.96.0.10"}, Host: host}
	f("ClusterFirst without --cluster-domain: host searches only", noDomain, policy(v1.DNSClusterFirst, false),
		&runtimeapi.DNSConfig{Servers: []string{"10.96.0.10"}, Searches: []string{"corp.example"}, Options: []string{"ndots:5"}})
	f("the pod's namespace leads the search path", cluster, func(p *v1.Pod) { p.Namespace = "team-a" },
		&runtimeapi.DNSConfig{
			Servers:  []string{"10.96.0.10"},
			Searches: []string{"team-a.svc.cluster.local", "svc.cluster.local", "cluster.local", "corp.example"},
			Options:  []string{"ndots:5"},
		})

	dnsConfig := func(p v1.DNSPolicy) func(*v1.Pod) {
		return func(pod *v1.Pod) {
			pod.Spec.DNSPolicy = p
			pod.Spec.DNSConfig = &v1.PodDNSConfig{
				Nameservers: []string{"198.51.100.1"},
				Searches:    []string{"corp.example", "extra.example", "extra.example"},
				Options: []v1.PodDNSConfigOption{
					{Name: "ndots", Value: ptrOf("1")},
					{Name: "edns0"},
					{Name: "timeout", Value: ptrOf("3")},
				},
			}
		}
	}
	f("dnsConfig merges into ClusterFirst", cluster, dnsConfig(v1.DNSClusterFirst), &runtimeapi.DNSConfig{
		Servers:  []string{"10.96.0.10", "198.51.100.1"},
		Searches: []string{"default.svc.cluster.local", "svc.cluster.local", "cluster.local", "corp.example", "extra.example"},
		Options:  []string{"ndots:1", "edns0", "timeout:3"},
	})
	f("dnsConfig merges into Default, replacing host options by name", cluster, dnsConfig(v1.DNSDefault), &runtimeapi.DNSConfig{
		Servers:  []string{"192.0.2.53", "198.51.100.1"},
		Searches: []string{"corp.example", "extra.example"},
		Options:  []string{"ndots:1", "timeout:3", "edns0"},
	})
	f("dnsConfig is everything under None", cluster, dnsConfig(v1.DNSNone), &runtimeapi.DNSConfig{
		Servers:  []string{"198.51.100.1"},
		Searches: []string{"corp.example", "extra.example"},
		Options:  []string{"ndots:1", "edns0", "timeout:3"},
	})
}
