// Package sysctl decides which sysctls a pod may set on this node: the
// safe set for the running kernel, plus what --allowed-unsafe-sysctls
// lists, and never one that would reach past the pod's own namespaces
// (a net.* sysctl of a host-network pod, an IPC sysctl of a host-IPC
// pod). Only sysctls the kernel scopes to a network or IPC namespace can
// be allowed at all: any other would change the whole node.
//
// The rules, names and messages are the kubelet's, since operators grep
// for them. The package is pure: it reads no /proc and applies nothing
// (the runtime sets the sysctls from the sandbox config).
package sysctl

import "strings"

// Namespace is the kernel namespace a sysctl belongs to.
type Namespace string

const (
	NetNamespace Namespace = "Net"
	IPCNamespace Namespace = "IPC"
	// NoNamespace is a sysctl of the whole node.
	NoNamespace Namespace = ""
)

// ipcNames are the IPC namespace's sysctls under kernel.*; "kernel.shm"
// and "kernel.msg" stand for the patterns kernel.shm* and kernel.msg*.
var ipcNames = map[string]bool{
	"kernel.sem":             true,
	"kernel.shmall":          true,
	"kernel.shmmax":          true,
	"kernel.shmmni":          true,
	"kernel.shm_rmid_forced": true,
	"kernel.shm":             true,
	"kernel.msgmax":          true,
	"kernel.msgmnb":          true,
	"kernel.msgmni":          true,
	"kernel.msg":             true,
}

// NamespaceOf returns the namespace of a sysctl in dotted form, or of the
// prefix of a pattern (its text before the '*').
func NamespaceOf(name string) Namespace {
	switch {
	case ipcNames[name]:
		return IPCNamespace
	case strings.HasPrefix(name, "net."):
		return NetNamespace
	case strings.HasPrefix(name, "fs.mqueue."):
		return IPCNamespace
	}
	return NoNamespace
}

// Normalize turns the slash form of a name (net/ipv4/conf/eth0.100/rp_filter)
// into the dotted one (net.ipv4.conf.eth0/100.rp_filter), as sysctl.d(5)
// reads it: when the first separator is a '/', dots and slashes swap.
func Normalize(name string) string {
	i := strings.IndexAny(name, "./")
	if i < 0 || name[i] == '.' {
		return name
	}
	return strings.Map(func(r rune) rune {
		switch r {
		case '.':
			return '/'
		case '/':
			return '.'
		}
		return r
	}, name)
}
