package sysctl

import (
	"slices"
	"testing"
)

func TestNormalize(t *testing.T) {
	f := func(in, want string) {
		t.Helper()
		if got := Normalize(in); got != want {
			t.Errorf("Normalize(%q) = %q, want %q", in, got, want)
		}
	}
	f("net.ipv4.ip_local_port_range", "net.ipv4.ip_local_port_range")
	f("net/ipv4/ip_local_port_range", "net.ipv4.ip_local_port_range")
	f("net/ipv4/conf/eth0.100/rp_filter", "net.ipv4.conf.eth0/100.rp_filter")
	f("net.ipv4.conf.eth0/100.rp_filter", "net.ipv4.conf.eth0/100.rp_filter")
	f("kernel", "kernel")
	f("", "")
}

func TestNamespaceOf(t *testing.T) {
	f := func(name string, want Namespace) {
		t.Helper()
		if got := NamespaceOf(name); got != want {
			t.Errorf("NamespaceOf(%q) = %q, want %q", name, got, want)
		}
	}
	f("net.core.somaxconn", NetNamespace)
	f("net.ipv4.conf.eth0/100.rp_filter", NetNamespace)
	f("net", NoNamespace)
	f("network.x", NoNamespace)
	f("kernel.shm_rmid_forced", IPCNamespace)
	f("kernel.msgmax", IPCNamespace)
	f("kernel.sem", IPCNamespace)
	f("kernel.shm", IPCNamespace)
	f("fs.mqueue.msg_max", IPCNamespace)
	f("fs.mqueue", NoNamespace)
	f("kernel.panic", NoNamespace)
	f("kernel.shmmaxx", NoNamespace)
	f("vm.swappiness", NoNamespace)
}

func TestSafe(t *testing.T) {
	always := []string{
		"kernel.shm_rmid_forced",
		"net.ipv4.ip_local_port_range",
		"net.ipv4.tcp_syncookies",
		"net.ipv4.ping_group_range",
		"net.ipv4.ip_unprivileged_port_start",
	}
	f := func(release string, want ...string) {
		t.Helper()
		want = append(slices.Clone(always), want...)
		if got := Safe(release); !slices.Equal(got, want) {
			t.Errorf("Safe(%q) =\n %q\nwant\n %q", release, got, want)
		}
	}
	f("")
	f("garbage")
	f("3.10.0-1160.el7.x86_64")
	f("3.16.0", "net.ipv4.ip_local_reserved_ports")
	f("4.5.0", "net.ipv4.ip_local_reserved_ports", "net.ipv4.tcp_keepalive_time",
		"net.ipv4.tcp_keepalive_intvl", "net.ipv4.tcp_keepalive_probes")
	f("4.14.300", "net.ipv4.ip_local_reserved_ports", "net.ipv4.tcp_keepalive_time",
		"net.ipv4.tcp_fin_timeout", "net.ipv4.tcp_keepalive_intvl", "net.ipv4.tcp_keepalive_probes")
	all := []string{"net.ipv4.ip_local_reserved_ports", "net.ipv4.tcp_keepalive_time",
		"net.ipv4.tcp_fin_timeout", "net.ipv4.tcp_keepalive_intvl", "net.ipv4.tcp_keepalive_probes",
		"net.ipv4.tcp_rmem", "net.ipv4.tcp_wmem"}
	f("4.15", all...)
	f("5.15.0-75-generic", all...)
	f("6.18.44-fc-v669", all...)
	f("10.0", all...)
}

func TestNewAllowlistRefuses(t *testing.T) {
	f := func(pattern, wantErr string) {
		t.Helper()
		_, err := NewAllowlist("6.18.0", []string{pattern})
		if err == nil || err.Error() != wantErr {
			t.Errorf("NewAllowlist(%q): %v, want %q", pattern, err, wantErr)
		}
	}
	badForm := func(p string) string {
		return `sysctl "` + p + `" must have at most 253 characters and match regex ` + patternFormat
	}
	f(" kernel.msg*", badForm(" kernel.msg*"))
	f("kernel.msg* ", badForm("kernel.msg* "))
	f("net.-", badForm("net.-"))
	f("net.*.foo", badForm("net.*.foo"))
	f("net.*/foo", badForm("net.*/foo"))
	f("Net.core.somaxconn", badForm("Net.core.somaxconn"))
	f("", badForm(""))
	f("foo", `the sysctls "foo" are not known to be namespaced`)
	f("foo*", `the sysctls "foo" are not known to be namespaced`)
	f("net*", `the sysctls "net" are not known to be namespaced`)
	f("kernel.panic", `the sysctls "kernel.panic" are not known to be namespaced`)
	f("vm.*", `the sysctls "vm." are not known to be namespaced`)
	f("kernel/domainname", `the sysctls "kernel.domainname" are not known to be namespaced`)

	for _, ok := range []string{"kernel.msg*", "kernel.sem", "kernel/sem", "net.*", "net.core.somaxconn",
		"fs.mqueue.*", "net/ipv4/conf/eth0.100/rp_filter"} {
		if _, err := NewAllowlist("6.18.0", []string{ok}); err != nil {
			t.Errorf("NewAllowlist(%q): %v", ok, err)
		}
	}
}

func TestAllowlistCheck(t *testing.T) {
	a, err := NewAllowlist("6.18.44-fc-v669", []string{"kernel.msg*", "kernel.sem", "net.b.*", "net.core.somaxconn"})
	if err != nil {
		t.Fatal(err)
	}
	f := func(name string, hostNet, hostIPC bool, wantErr string) {
		t.Helper()
		err := a.Check(name, hostNet, hostIPC)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != wantErr {
			t.Errorf("Check(%q, hostNetwork=%v, hostIPC=%v) = %q, want %q", name, hostNet, hostIPC, got, wantErr)
		}
	}
	// Safe, listed, and the slash form of either.
	f("kernel.shm_rmid_forced", false, false, "")
	f("kernel/shm_rmid_forced", false, false, "")
	f("net.ipv4.ip_local_port_range", false, false, "")
	f("net.ipv4.ip_unprivileged_port_start", false, false, "")
	f("net.ipv4.tcp_rmem", false, false, "")
	f("kernel.msgmax", false, false, "")
	f("kernel.sem", false, false, "")
	f("kernel/sem", false, false, "")
	f("net.b.c", false, false, "")
	f("net.core.somaxconn", false, false, "")
	f("net/core/somaxconn", false, false, "")
	// The other namespace's host flag does not matter.
	f("net.ipv4.ip_local_port_range", false, true, "")
	f("kernel.sem", true, false, "")

	f("foo", false, false, `"foo" not allowlisted`)
	f("net.a.b.c", false, false, `"net.a.b.c" not allowlisted`)
	f("net.ipv4.ip_local_port_range.a.b.c", false, false, `"net.ipv4.ip_local_port_range.a.b.c" not allowlisted`)
	f("net.core.rmem_max", false, false, `"net.core.rmem_max" not allowlisted`)
	f("net/core/rmem_max", false, false, `"net.core.rmem_max" not allowlisted`)
	f("kernel.panic", false, false, `"kernel.panic" not allowlisted`)

	f("kernel.shm_rmid_forced", false, true, `"kernel.shm_rmid_forced" not allowed with host IPC enabled`)
	f("kernel.msgmax", false, true, `"kernel.msgmax" not allowed with host IPC enabled`)
	f("kernel.sem", false, true, `"kernel.sem" not allowed with host IPC enabled`)
	f("net.ipv4.ip_local_port_range", true, false, `"net.ipv4.ip_local_port_range" not allowed with host Net enabled`)
	f("net.b.c", true, false, `"net.b.c" not allowed with host Net enabled`)
	f("net.ipv4.ip_unprivileged_port_start", true, false, `"net.ipv4.ip_unprivileged_port_start" not allowed with host Net enabled`)

	old, err := NewAllowlist("4.4.0", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := old.Check("net.ipv4.tcp_keepalive_time", false, false); err == nil {
		t.Error("net.ipv4.tcp_keepalive_time is not namespaced before 4.5, yet allowed on 4.4")
	}
}
