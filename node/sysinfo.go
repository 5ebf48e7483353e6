package node

import (
	"net"
	"strings"

	v1 "k8s.io/api/core/v1"

	"github.com/podline/podline/machine"
)

// SystemInfo is the nodeInfo of the Node status. runtimeName and
// runtimeVersion are what the CRI Version call answered ("containerd",
// "v1.7.27"); kubeletVersion is podline's own version. kubeProxyVersion
// stays empty: the field is deprecated and podline runs no proxy.
func SystemInfo(m *machine.Info, runtimeName, runtimeVersion, kubeletVersion string) v1.NodeSystemInfo {
	return v1.NodeSystemInfo{
		MachineID:               m.MachineID,
		SystemUUID:              m.SystemUUID,
		BootID:                  m.BootID,
		KernelVersion:           m.KernelVersion,
		OSImage:                 m.OSImage,
		ContainerRuntimeVersion: RuntimeVersion(runtimeName, runtimeVersion),
		KubeletVersion:          kubeletVersion,
		OperatingSystem:         m.OperatingSystem,
		Architecture:            m.Architecture,
	}
}

// RuntimeVersion is "<name>://<version>" as the kubelet writes it,
// "containerd://1.7.27": a leading "v" before a digit is dropped.
func RuntimeVersion(name, version string) string {
	if rest, ok := strings.CutPrefix(version, "v"); ok && rest != "" && rest[0] >= '0' && rest[0] <= '9' {
		version = rest
	}
	if version == "" {
		version = "Unknown"
	}
	return name + "://" + version
}

// Addresses are the node's status addresses: an InternalIP per node IP,
// primary first, then the Hostname. Entries that are not IPs are skipped.
func Addresses(ips []string, hostname string) []v1.NodeAddress {
	var out []v1.NodeAddress
	for _, ip := range ips {
		if net.ParseIP(ip) != nil {
			out = append(out, v1.NodeAddress{Type: v1.NodeInternalIP, Address: ip})
		}
	}
	if hostname != "" {
		out = append(out, v1.NodeAddress{Type: v1.NodeHostName, Address: hostname})
	}
	return out
}
