//go:build e2e

package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
)

// admissionPod renders a static pod of one busybox container running
// script; specLines go under spec, containerLines under the container.
func admissionPod(name, script string, specLines, containerLines []string) string {
	indent := func(lines []string, by string) string {
		var b strings.Builder
		for _, l := range lines {
			b.WriteString(by + l + "\n")
		}
		return b.String()
	}
	return fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: %s
spec:
  terminationGracePeriodSeconds: 5
%s  containers:
  - name: app
    image: %s
    command: ["sh", "-c", %q]
%s`, name, indent(specLines, "  "), busybox, "trap 'exit 0' TERM; "+script, indent(containerLines, "    "))
}

func sysctlLines(name, value string) []string {
	return []string{"securityContext:", "  sysctls:", "  - name: " + name, fmt.Sprintf("    value: %q", value)}
}

// waitRejected waits for the pod to end Failed and checks the kubelet's
// reason and message, and that the runtime never saw it.
func (a *agent) waitRejected(name, reason, message string) {
	a.t.Helper()
	p := a.waitPod(name, "Failed", 30*time.Second, func(p *v1.Pod) bool { return p.Status.Phase == v1.PodFailed })
	if p.Status.Reason != reason || p.Status.Message != message {
		a.t.Errorf("%s: reason %q, message %q; want %q, %q", name, p.Status.Reason, p.Status.Message, reason, message)
	}
	if ids := runtimePods(a.t, string(p.UID)); len(ids) != 0 {
		a.t.Errorf("%s was rejected, yet the runtime has its sandboxes %v", name, ids)
	}
}

// waitLog waits for the container's log to hold want.
func (a *agent) waitLog(p *v1.Pod, want string) {
	a.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !contains(a.readLog(p, "app", 0), want) {
		if time.Now().After(deadline) {
			a.t.Fatalf("%s: log %q never showed %q", p.Name, a.readLog(p, "app", 0), want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Two host-network pods asking for the same host port: the second is
// refused as the kubelet refuses it, and nothing of it is created.
func TestAdmissionHostPortConflict(t *testing.T) {
	a := startAgent(t)
	spec := []string{"hostNetwork: true"}
	ports := []string{"ports:", "- containerPort: 28417", "  hostPort: 28417"}
	a.writeManifest("first.yaml", admissionPod("first", "while true; do sleep 1; done", spec, ports))
	a.waitRunning("first", 60*time.Second)
	a.writeManifest("second.yaml", admissionPod("second", "while true; do sleep 1; done", spec, ports))
	a.waitRejected("second", "NodePorts",
		"Predicate NodePorts failed: node(s) didn't have free ports for the requested pod ports")
}

// Sysctls: the safe set is applied; an unsafe one is refused unless
// --allowed-unsafe-sysctls lists it, and then applied; a network sysctl
// is refused to a host-network pod, even a safe one.
func TestAdmissionSysctls(t *testing.T) {
	const unsafe = "net.core.somaxconn"
	show := func(name string) string {
		return "echo " + name + "=$(cat /proc/sys/" + strings.ReplaceAll(name, ".", "/") + "); while true; do sleep 1; done"
	}
	t.Run("default", func(t *testing.T) {
		a := startAgent(t)
		a.writeManifest("unsafe.yaml", admissionPod("unsafe", show(unsafe), sysctlLines(unsafe, "1000"), nil))
		a.writeManifest("hostnet.yaml", admissionPod("hostnet", show("net.ipv4.ip_unprivileged_port_start"),
			append([]string{"hostNetwork: true"}, sysctlLines("net.ipv4.ip_unprivileged_port_start", "1000")...), nil))
		const safe = "net.ipv4.ip_unprivileged_port_start"
		a.writeManifest("safe.yaml", admissionPod("safe", show(safe), sysctlLines(safe, "1000"), nil))

		a.waitRejected("unsafe", "SysctlForbidden", `forbidden sysctl: "net.core.somaxconn" not allowlisted`)
		a.waitRejected("hostnet", "SysctlForbidden",
			`forbidden sysctl: "net.ipv4.ip_unprivileged_port_start" not allowed with host Net enabled`)
		a.waitLog(a.waitRunning("safe", 60*time.Second), safe+"=1000")
	})
	t.Run("allowed", func(t *testing.T) {
		a := startAgent(t, "--allowed-unsafe-sysctls", "net.core.*")
		a.writeManifest("unsafe.yaml", admissionPod("unsafe", show(unsafe), sysctlLines(unsafe, "1000"), nil))
		a.waitLog(a.waitRunning("unsafe", 60*time.Second), unsafe+"=1000")
	})
}
