package podspec

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// DNS is the node's DNS setup: --cluster-dns, --cluster-domain and the
// host's resolver file (--resolv-conf).
type DNS struct {
	ClusterDNS    []string
	ClusterDomain string
	// Host is the parsed --resolv-conf; empty when that flag is "".
	Host ResolvConf
}

// ResolvConf is a parsed resolv.conf.
type ResolvConf struct {
	Servers, Searches, Options []string
}

// ReadResolvConf parses a resolv.conf file. An empty path means none.
func ReadResolvConf(path string) (ResolvConf, error) {
	var cfg ResolvConf
	if path == "" {
		return cfg, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return cfg, fmt.Errorf("read --resolv-conf: %w", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := sc.Text()
		if i := strings.IndexAny(line, "#;"); i >= 0 {
			line = line[:i]
		}
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		switch f[0] {
		case "nameserver":
			cfg.Servers = append(cfg.Servers, f[1])
		case "search":
			// "." (the root) adds nothing, and a trailing dot would be
			// doubled when a name is appended.
			cfg.Searches = cfg.Searches[:0]
			for _, d := range f[1:] {
				if d = strings.TrimSuffix(d, "."); d != "" {
					cfg.Searches = append(cfg.Searches, d)
				}
			}
		case "options":
			cfg.Options = append(cfg.Options, f[1:]...)
		}
	}
	return cfg, sc.Err()
}

// ForPod computes the pod's resolver configuration from its dnsPolicy and
// dnsConfig, as the kubelet does. ClusterFirst without --cluster-dns falls
// back to the host's resolver.
func (d *DNS) ForPod(pod *v1.Pod) *runtimeapi.DNSConfig {
	var out runtimeapi.DNSConfig
	switch d.effectivePolicy(pod) {
	case v1.DNSNone:
	case v1.DNSClusterFirst:
		ns := pod.Namespace
		out.Servers = slices.Clone(d.ClusterDNS)
		if dom := d.ClusterDomain; dom != "" {
			out.Searches = []string{ns + ".svc." + dom, "svc." + dom, dom}
		}
		out.Searches = append(out.Searches, d.Host.Searches...)
		out.Options = []string{"ndots:5"}
	default:
		out.Servers = slices.Clone(d.Host.Servers)
		out.Searches = slices.Clone(d.Host.Searches)
		out.Options = slices.Clone(d.Host.Options)
	}
	if pc := pod.Spec.DNSConfig; pc != nil {
		out.Servers = append(out.Servers, pc.Nameservers...)
		out.Searches = append(out.Searches, pc.Searches...)
		for _, o := range pc.Options {
			opt := o.Name
			if o.Value != nil {
				opt += ":" + *o.Value
			}
			out.Options = mergeOption(out.Options, o.Name, opt)
		}
	}
	out.Searches = dedupe(out.Searches)
	return &out
}

func (d *DNS) effectivePolicy(pod *v1.Pod) v1.DNSPolicy {
	switch pod.Spec.DNSPolicy {
	case v1.DNSNone:
		return v1.DNSNone
	case v1.DNSDefault:
		return v1.DNSDefault
	case v1.DNSClusterFirstWithHostNet:
		if len(d.ClusterDNS) > 0 {
			return v1.DNSClusterFirst
		}
		return v1.DNSDefault
	}
	// ClusterFirst (and unset).
	if pod.Spec.HostNetwork || len(d.ClusterDNS) == 0 {
		return v1.DNSDefault
	}
	return v1.DNSClusterFirst
}

// mergeOption replaces an option of the same name or appends it.
func mergeOption(opts []string, name, opt string) []string {
	for i, o := range opts {
		if o == name || strings.HasPrefix(o, name+":") {
			opts[i] = opt
			return opts
		}
	}
	return append(opts, opt)
}

func dedupe(in []string) []string {
	var out []string
	for _, s := range in {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}
