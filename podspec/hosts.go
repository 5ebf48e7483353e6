package podspec

import (
	"bytes"
	"fmt"
	"net"
	"path/filepath"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
)

// EtcHosts is where the pod's hosts file is mounted, and the node's own
// hosts file that host-network pods start from.
const EtcHosts = "/etc/hosts"

const (
	hostsHeader        = "# Kubernetes-managed hosts file.\n"
	hostsHeaderHostNet = "# Kubernetes-managed hosts file (host network).\n"
	hostAliasesHeader  = "# Entries added by HostAliases.\n"
)

// localhostEntries open every pod-network hosts file: without them a
// container's /etc/hosts would not resolve localhost at all, since the
// file replaces the image's.
const localhostEntries = "127.0.0.1\tlocalhost\n" +
	"::1\tlocalhost ip6-localhost ip6-loopback\n" +
	"fe00::0\tip6-localnet\n" +
	"fe00::0\tip6-mcastprefix\n" +
	"fe00::1\tip6-allnodes\n" +
	"fe00::2\tip6-allrouters\n"

// HostsFilePath is the pod's hosts file on the host, <pod dir>/etc-hosts.
func HostsFilePath(node *Node, uid types.UID) string {
	return filepath.Join(node.PodDir(uid), "etc-hosts")
}

// MountsHostsFile reports whether the container gets the pod's hosts file
// at /etc/hosts: every container of a host-network pod, and of a
// pod-network pod once its sandbox has an address, unless the container
// mounts a volume there itself.
func MountsHostsFile(pod *v1.Pod, spec *v1.Container, podIPs []string) bool {
	if !pod.Spec.HostNetwork && len(podIPs) == 0 {
		return false
	}
	for _, vm := range spec.VolumeMounts {
		if vm.MountPath == EtcHosts {
			return false
		}
	}
	return true
}

// HostsFile is the content of the pod's hosts file. A pod-network pod
// gets the localhost entries and each pod IP mapped to its hostname (and
// first to its FQDN when it has a subdomain); a host-network pod gets the
// node's hosts file, nodeHosts, as it is. Both end with spec.hostAliases,
// one line per IP, in the spec's order.
func HostsFile(pod *v1.Pod, podIPs []string, node *Node, nodeHosts []byte) ([]byte, error) {
	aliases, err := hostAliasEntries(pod.Spec.HostAliases)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if pod.Spec.HostNetwork {
		b.WriteString(hostsHeaderHostNet)
		b.Write(nodeHosts)
		b.WriteString(aliases)
		return b.Bytes(), nil
	}
	hostname, domain, err := PodHostname(pod, node.DNS.ClusterDomain)
	if err != nil {
		return nil, err
	}
	b.WriteString(hostsHeader)
	b.WriteString(localhostEntries)
	for _, ip := range podIPs {
		if domain != "" {
			fmt.Fprintf(&b, "%s\t%s.%s\t%s\n", ip, hostname, domain, hostname)
		} else {
			fmt.Fprintf(&b, "%s\t%s\n", ip, hostname)
		}
	}
	b.WriteString(aliases)
	return b.Bytes(), nil
}

// hostAliasEntries renders spec.hostAliases. Each IP and name is checked
// as the API server checks it, so a static pod cannot write other lines
// into the file than the ones it names.
func hostAliasEntries(aliases []v1.HostAlias) (string, error) {
	if len(aliases) == 0 {
		return "", nil
	}
	var b strings.Builder
	b.WriteString("\n")
	b.WriteString(hostAliasesHeader)
	for i, a := range aliases {
		if net.ParseIP(a.IP) == nil {
			return "", fmt.Errorf("spec.hostAliases[%d].ip: Invalid value: %q: must be a valid IP address", i, a.IP)
		}
		for j, h := range a.Hostnames {
			if msgs := validation.IsDNS1123Subdomain(h); len(msgs) > 0 {
				return "", fmt.Errorf("spec.hostAliases[%d].hostnames[%d]: Invalid value: %q: %s", i, j, h, strings.Join(msgs, "; "))
			}
		}
		b.WriteString(a.IP)
		b.WriteString("\t")
		b.WriteString(strings.Join(a.Hostnames, "\t"))
		b.WriteString("\n")
	}
	return b.String(), nil
}
