package podspec

import (
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
)

func TestPodHostnameAndDomain(t *testing.T) {
	f := func(name string, mutate func(*v1.Pod), clusterDomain, wantHost, wantDomain, wantErr string) {
		t.Helper()
		host, domain, err := PodHostname(unitPod(mutate), clusterDomain)
		if wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), wantErr) {
				t.Errorf("%s: error %v, want one containing %q", name, err, wantErr)
			}
			return
		}
		if err != nil || host != wantHost || domain != wantDomain {
			t.Errorf("%s: got (%q, %q, %v), want (%q, %q)", name, host, domain, err, wantHost, wantDomain)
		}
	}
	long := strings.Repeat("a", 70)
	f("pod name", nil, "cluster.local", "web", "", "")
	f("spec.hostname", func(p *v1.Pod) { p.Spec.Hostname = "db-0" }, "cluster.local", "db-0", "", "")
	f("subdomain", func(p *v1.Pod) { p.Spec.Hostname, p.Spec.Subdomain = "db-0", "db" }, "cluster.local",
		"db-0", "db.default.svc.cluster.local", "")
	f("subdomain without a cluster domain, as the kubelet writes it",
		func(p *v1.Pod) { p.Spec.Subdomain = "db" }, "", "web", "db.default.svc.", "")
	f("long pod name cut to 63", func(p *v1.Pod) { p.Name = long }, "", long[:63], "", "")
	f("cut leaves no trailing dash or dot", func(p *v1.Pod) { p.Name = strings.Repeat("b", 61) + ".-c" }, "",
		strings.Repeat("b", 61), "", "")
	f("hostname not a DNS label", func(p *v1.Pod) { p.Spec.Hostname = "Db_0" }, "",
		"", "", `pod Hostname "Db_0" is not a valid DNS label`)
	f("subdomain not a DNS label", func(p *v1.Pod) { p.Spec.Subdomain = "a.b" }, "",
		"", "", `pod Subdomain "a.b" is not a valid DNS label`)
	f("hostnameOverride wins and has no domain", func(p *v1.Pod) {
		p.Spec.HostnameOverride, p.Spec.Hostname, p.Spec.Subdomain = ptrOf("box.example.com"), "db-0", "db"
	}, "cluster.local", "box.example.com", "", "")
	f("hostnameOverride not a DNS subdomain", func(p *v1.Pod) { p.Spec.HostnameOverride = ptrOf("Box!") }, "",
		"", "", `pod HostnameOverride "Box!" is not a valid DNS subdomain`)
}

func TestSandboxHostname(t *testing.T) {
	node := &Node{DNS: DNS{ClusterDomain: "cluster.local"}}
	f := func(name string, mutate func(*v1.Pod), want, wantErr string) {
		t.Helper()
		got, err := SandboxHostname(unitPod(mutate), node)
		if wantErr != "" {
			if err == nil || !strings.HasPrefix(err.Error(), wantErr) {
				t.Errorf("%s: error %v,\nwant %s...", name, err, wantErr)
			}
			return
		}
		if err != nil || got != want {
			t.Errorf("%s: got %q (%v), want %q", name, got, err, want)
		}
	}
	fqdn := func(host string) func(*v1.Pod) {
		return func(p *v1.Pod) {
			p.Spec.Hostname, p.Spec.Subdomain, p.Spec.SetHostnameAsFQDN = host, "db", ptrOf(true)
		}
	}
	f("short hostname", func(p *v1.Pod) { p.Spec.Hostname, p.Spec.Subdomain = "db-0", "db" }, "db-0", "")
	f("setHostnameAsFQDN", fqdn("db-0"), "db-0.db.default.svc.cluster.local", "")
	f("setHostnameAsFQDN false", func(p *v1.Pod) {
		fqdn("db-0")(p)
		p.Spec.SetHostnameAsFQDN = ptrOf(false)
	}, "db-0", "")
	f("setHostnameAsFQDN without a subdomain: the short name", func(p *v1.Pod) {
		p.Spec.SetHostnameAsFQDN = ptrOf(true)
	}, "web", "")
	// ".db.default.svc.cluster.local" is 29 characters.
	f("an FQDN of 64 characters fits", fqdn(strings.Repeat("h", 35)), strings.Repeat("h", 35)+".db.default.svc.cluster.local", "")
	f("an FQDN of 65 does not", fqdn(strings.Repeat("h", 36)), "",
		"failed to construct FQDN from pod hostname and cluster domain, FQDN "+strings.Repeat("h", 36)+
			".db.default.svc.cluster.local is too long (64 characters is the max, 65 characters requested)")
	f("host network: none, whatever the spec", func(p *v1.Pod) {
		fqdn(strings.Repeat("h", 60))(p)
		p.Spec.HostNetwork = true
	}, "", "")
	f("hostname not a DNS label", func(p *v1.Pod) { p.Spec.Hostname = "-x" }, "",
		`pod Hostname "-x" is not a valid DNS label: a lowercase RFC 1123 label must`)
}
