package sysctl

import (
	"strconv"
	"strings"
)

// safe is the set of sysctls any pod may set: each is scoped to the pod's
// own namespace and cannot starve its neighbours. Some became namespaced
// only in a later kernel; before it they would change the node, so they
// are safe only from that kernel on.
var safe = []struct {
	name string
	// since is the first kernel (major, minor) where the sysctl is
	// namespaced; zero when it always was.
	since [2]int
}{
	{name: "kernel.shm_rmid_forced"},
	{name: "net.ipv4.ip_local_port_range"},
	{name: "net.ipv4.tcp_syncookies"},
	{name: "net.ipv4.ping_group_range"},
	{name: "net.ipv4.ip_unprivileged_port_start"},
	{name: "net.ipv4.ip_local_reserved_ports", since: [2]int{3, 16}},
	{name: "net.ipv4.tcp_keepalive_time", since: [2]int{4, 5}},
	{name: "net.ipv4.tcp_fin_timeout", since: [2]int{4, 6}},
	{name: "net.ipv4.tcp_keepalive_intvl", since: [2]int{4, 5}},
	{name: "net.ipv4.tcp_keepalive_probes", since: [2]int{4, 5}},
	{name: "net.ipv4.tcp_rmem", since: [2]int{4, 15}},
	{name: "net.ipv4.tcp_wmem", since: [2]int{4, 15}},
}

// Safe returns the safe sysctls for a kernel release as uname gives it
// ("6.18.44-fc-v669"). When the release cannot be read, only those that
// need no particular kernel are safe.
func Safe(kernelRelease string) []string {
	kernel, known := parseRelease(kernelRelease)
	var out []string
	for _, s := range safe {
		if s.since == ([2]int{}) || known && !older(kernel, s.since) {
			out = append(out, s.name)
		}
	}
	return out
}

// parseRelease reads the leading "major.minor" of a kernel release.
func parseRelease(release string) (v [2]int, ok bool) {
	major, rest, found := strings.Cut(release, ".")
	if !found {
		return v, false
	}
	end := strings.IndexFunc(rest, func(r rune) bool { return r < '0' || r > '9' })
	if end < 0 {
		end = len(rest)
	}
	var err1, err2 error
	v[0], err1 = strconv.Atoi(major)
	v[1], err2 = strconv.Atoi(rest[:end])
	return v, err1 == nil && err2 == nil
}

func older(v, than [2]int) bool {
	return v[0] < than[0] || v[0] == than[0] && v[1] < than[1]
}
