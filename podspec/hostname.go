package podspec

import (
	"fmt"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// hostnameMaxLen is what the kernel's nodename holds less its terminator;
// a longer name is cut, as the kubelet cuts it.
const hostnameMaxLen = 63

// fqdnMaxLen is the longest FQDN setHostnameAsFQDN may set: a longer one
// does not fit the nodename and the sandbox is refused instead.
const fqdnMaxLen = 64

// PodHostname is the pod's short hostname and its domain, as the pod's
// hosts file and the sandbox see them: spec.hostnameOverride alone, or
// spec.hostname (else the pod name) cut to 63 characters, in the domain
// <subdomain>.<namespace>.svc.<cluster-domain> when spec.subdomain is set.
// The domain is written even without a cluster domain (ending "svc."),
// as the kubelet writes it.
func PodHostname(pod *v1.Pod, clusterDomain string) (hostname, domain string, err error) {
	if o := pod.Spec.HostnameOverride; o != nil {
		if msgs := validation.IsDNS1123Subdomain(*o); len(msgs) > 0 {
			return "", "", fmt.Errorf("pod HostnameOverride %q is not a valid DNS subdomain: %s", *o, strings.Join(msgs, ";"))
		}
		hostname, err = cutHostname(pod.Name, *o)
		return hostname, "", err
	}
	hostname = pod.Name
	if h := pod.Spec.Hostname; h != "" {
		if msgs := validation.IsDNS1123Label(h); len(msgs) > 0 {
			return "", "", fmt.Errorf("pod Hostname %q is not a valid DNS label: %s", h, strings.Join(msgs, ";"))
		}
		hostname = h
	}
	if hostname, err = cutHostname(pod.Name, hostname); err != nil {
		return "", "", err
	}
	if sub := pod.Spec.Subdomain; sub != "" {
		if msgs := validation.IsDNS1123Label(sub); len(msgs) > 0 {
			return "", "", fmt.Errorf("pod Subdomain %q is not a valid DNS label: %s", sub, strings.Join(msgs, ";"))
		}
		domain = fmt.Sprintf("%s.%s.svc.%s", sub, pod.Namespace, clusterDomain)
	}
	return hostname, domain, nil
}

// cutHostname keeps a hostname within the nodename: a pod name may be a
// 253-character subdomain. The cut must not leave a trailing '-' or '.'.
func cutHostname(podName, h string) (string, error) {
	if len(h) <= hostnameMaxLen {
		return h, nil
	}
	cut := strings.TrimRight(h[:hostnameMaxLen], "-.")
	if cut == "" {
		return "", fmt.Errorf("hostname for pod %q was invalid: %q", podName, h)
	}
	return cut, nil
}

// SandboxHostname is the hostname the sandbox sets: none for host-network
// pods (the runtime cannot set one without a private UTS namespace), the
// FQDN with setHostnameAsFQDN and a subdomain, else the short hostname.
// An FQDN longer than the nodename holds is an error, which refuses the
// sandbox.
func SandboxHostname(pod *v1.Pod, node *Node) (string, error) {
	if pod.Spec.HostNetwork {
		return "", nil
	}
	hostname, domain, err := PodHostname(pod, node.DNS.ClusterDomain)
	if err != nil {
		return "", err
	}
	if domain == "" || pod.Spec.SetHostnameAsFQDN == nil || !*pod.Spec.SetHostnameAsFQDN {
		return hostname, nil
	}
	fqdn := hostname + "." + domain
	if len(fqdn) > fqdnMaxLen {
		return "", fmt.Errorf("failed to construct FQDN from pod hostname and cluster domain, FQDN %s is too long (%d characters is the max, %d characters requested)",
			fqdn, fqdnMaxLen, len(fqdn))
	}
	return fqdn, nil
}
