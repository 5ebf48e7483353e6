package stages

import (
	"reflect"
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/podline/podline/sysctl"
)

func TestSysctlRejection(t *testing.T) {
	allow, err := sysctl.NewAllowlist("6.18.44-fc-v669", []string{"net.core.somaxconn", "kernel.msg*"})
	if err != nil {
		t.Fatal(err)
	}
	f := func(name string, allowed *sysctl.Allowlist, hostNet, hostIPC bool, sysctls []string, want string) {
		t.Helper()
		pod := unitPod(func(p *v1.Pod) {
			p.Spec.HostNetwork, p.Spec.HostIPC = hostNet, hostIPC
			if sysctls == nil {
				return
			}
			p.Spec.SecurityContext = &v1.PodSecurityContext{}
			for _, s := range sysctls {
				p.Spec.SecurityContext.Sysctls = append(p.Spec.SecurityContext.Sysctls, v1.Sysctl{Name: s, Value: "1"})
			}
		})
		var wantRej *Rejection
		if want != "" {
			wantRej = &Rejection{Reason: "SysctlForbidden", Message: "forbidden sysctl: " + want}
		}
		if got := sysctlRejection(pod, allowed); !reflect.DeepEqual(got, wantRej) {
			t.Errorf("%s:\n got %+v\nwant %+v", name, got, wantRej)
		}
	}
	f("no security context", allow, false, false, nil, "")
	f("no sysctls", allow, false, false, []string{}, "")
	f("safe", allow, false, false, []string{"net.ipv4.ip_unprivileged_port_start", "kernel.shm_rmid_forced"}, "")
	f("safe, gated by the kernel", allow, false, false, []string{"net.ipv4.tcp_rmem", "net.ipv4.ip_local_reserved_ports"}, "")
	f("listed unsafe", allow, false, false, []string{"net.core.somaxconn", "kernel.msgmax"}, "")
	f("unsafe", allow, false, false, []string{"net.ipv4.ip_local_port_range", "net.core.rmem_max"}, `"net.core.rmem_max" not allowlisted`)
	f("the first refused one", allow, false, false, []string{"vm.swappiness", "net.core.rmem_max"}, `"vm.swappiness" not allowlisted`)
	f("slash form reads dotted", allow, false, false, []string{"net/core/rmem_max"}, `"net.core.rmem_max" not allowlisted`)
	f("net on a host-network pod", allow, true, false, []string{"net.core.somaxconn"}, `"net.core.somaxconn" not allowed with host Net enabled`)
	f("safe net on a host-network pod", allow, true, false, []string{"net.ipv4.ip_unprivileged_port_start"},
		`"net.ipv4.ip_unprivileged_port_start" not allowed with host Net enabled`)
	f("ipc on a host-network pod", allow, true, false, []string{"kernel.msgmax"}, "")
	f("ipc on a host-IPC pod", allow, false, true, []string{"kernel.shm_rmid_forced"}, `"kernel.shm_rmid_forced" not allowed with host IPC enabled`)
	f("nil allows none", nil, false, false, []string{"net.ipv4.ip_unprivileged_port_start"}, `"net.ipv4.ip_unprivileged_port_start" not allowlisted`)
	f("nil, no sysctls", nil, false, false, nil, "")
}
