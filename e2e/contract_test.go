//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
)

// contractPod renders a static pod of one busybox container "app" that
// runs script under sh, with an emptyDir "out" at /out for what the
// container reports. podLines and containerLines are extra YAML lines,
// indented for spec and for the container.
func contractPod(name, policy, script string, podLines, containerLines []string) string {
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
  restartPolicy: %s
  terminationGracePeriodSeconds: 2
  volumes:
  - name: out
    emptyDir: {}
%s  containers:
  - name: app
    image: %s
    command: ["sh", "-c", %q]
    volumeMounts:
    - {name: out, mountPath: /out}
%s`, name, policy, indent(podLines, "  "), busybox, "trap 'exit 0' TERM; "+script, indent(containerLines, "    "))
}

// waitTerminated waits for the app container of a Never pod to have
// exited and returns its terminated state.
func (a *agent) waitTerminated(name string) *v1.ContainerStateTerminated {
	a.t.Helper()
	p := a.waitPod(name, "terminated", 60*time.Second, func(p *v1.Pod) bool {
		cs := p.Status.ContainerStatuses
		return len(cs) == 1 && cs[0].State.Terminated != nil
	})
	return p.Status.ContainerStatuses[0].State.Terminated
}

// waitMessage waits for the app container of a Never pod to have exited
// with a message. One taken from the log may come a moment after the
// exit: the kernel reports the exit before the runtime has all the output.
func (a *agent) waitMessage(name string) *v1.ContainerStateTerminated {
	a.t.Helper()
	p := a.waitPod(name, "terminated with a message", 60*time.Second, func(p *v1.Pod) bool {
		cs := p.Status.ContainerStatuses
		return len(cs) == 1 && cs[0].State.Terminated != nil && cs[0].State.Terminated.Message != ""
	})
	return p.Status.ContainerStatuses[0].State.Terminated
}

func TestContractTerminationMessage(t *testing.T) {
	a := startAgent(t)
	a.writeManifest("bye.yaml", contractPod("bye", "Never", "printf bye > /dev/termination-log; exit 3", nil, nil))
	a.writeManifest("big.yaml", contractPod("big", "Never",
		"head -c 10240 /dev/zero | tr '\\0' x > /dev/termination-log; printf END >> /dev/termination-log; exit 1", nil, nil))
	a.writeManifest("nonroot.yaml", contractPod("nonroot", "Never",
		"printf 'written by 1000' > /dev/termination-log; exit 1", nil, []string{"securityContext: {runAsUser: 1000}"}))
	a.writeManifest("path.yaml", contractPod("path", "Never", "printf elsewhere > /tmp/msg; exit 0", nil,
		[]string{"terminationMessagePath: /tmp/msg"}))

	if term := a.waitTerminated("bye"); term.ExitCode != 3 || term.Message != "bye" {
		t.Errorf("bye: exit code %d, message %q; want 3 and \"bye\"", term.ExitCode, term.Message)
	}
	// The kubelet keeps the end of a long file.
	if term := a.waitTerminated("big"); len(term.Message) != 4096 || !strings.HasSuffix(term.Message, "xxxEND") {
		t.Errorf("big: a %d-byte message ending %q; want the file's last 4096 bytes",
			len(term.Message), term.Message[max(len(term.Message)-10, 0):])
	}
	if term := a.waitTerminated("nonroot"); term.Message != "written by 1000" {
		t.Errorf("nonroot: message %q; a non-root container must be able to write its termination log", term.Message)
	}
	if term := a.waitTerminated("path"); term.Message != "elsewhere" || term.Reason != "Completed" {
		t.Errorf("path: %+v; want the message from terminationMessagePath", term)
	}
}

func TestContractTerminationMessageAfterRestart(t *testing.T) {
	a := startAgent(t)
	// The first run leaves a message and fails; the restarted one stays.
	a.writeManifest("again.yaml", contractPod("again", "OnFailure",
		"if [ -e /out/ran ]; then while true; do sleep 1; done; fi; touch /out/ran; printf 'first run' > /dev/termination-log; exit 3",
		nil, nil))
	p := a.waitPod("again", "restarted", 60*time.Second, func(p *v1.Pod) bool {
		cs := p.Status.ContainerStatuses
		return len(cs) == 1 && cs[0].RestartCount == 1 && cs[0].State.Running != nil
	})
	last := p.Status.ContainerStatuses[0].LastTerminationState.Terminated
	if last == nil || last.ExitCode != 3 || last.Message != "first run" {
		t.Fatalf("lastState = %+v; want exit code 3 and message \"first run\"", last)
	}
}

func TestContractTerminationMessageFallbackToLogs(t *testing.T) {
	a := startAgent(t)
	fallback := []string{"terminationMessagePolicy: FallbackToLogsOnError"}
	a.writeManifest("logs.yaml", contractPod("logs", "Never", "echo starting; echo 'fatal: no config'; exit 2", nil, fallback))
	a.writeManifest("many.yaml", contractPod("many", "Never", "for i in $(seq 1 100); do echo line $i; done; exit 1", nil, fallback))
	a.writeManifest("fine.yaml", contractPod("fine", "Never", "echo all good; exit 0", nil, fallback))
	a.writeManifest("file.yaml", contractPod("file", "Never", "echo noise; printf 'from the file' > /dev/termination-log; exit 1", nil, fallback))

	if term := a.waitMessage("logs"); term.ExitCode != 2 || term.Message != "starting\nfatal: no config\n" {
		t.Errorf("logs: exit code %d, message %q; want the log's tail", term.ExitCode, term.Message)
	}
	var want strings.Builder
	for i := 21; i <= 100; i++ {
		fmt.Fprintf(&want, "line %d\n", i)
	}
	if term := a.waitMessage("many"); term.Message != want.String() {
		t.Errorf("many: message %q; want the last 80 lines", term.Message)
	}
	if term := a.waitTerminated("fine"); term.Message != "" {
		t.Errorf("fine: message %q; a success never takes the log", term.Message)
	}
	if term := a.waitTerminated("file"); term.Message != "from the file" {
		t.Errorf("file: message %q; the file wins over the log", term.Message)
	}
}

// seen waits for a file the pod's container wrote into its "out" volume.
func (a *agent) seen(p *v1.Pod, file string) string {
	a.t.Helper()
	path := filepath.Join(a.root, "pods", string(p.UID), "volumes", "kubernetes.io~empty-dir", "out", file)
	deadline := time.Now().Add(30 * time.Second)
	for {
		if b, err := os.ReadFile(path); err == nil {
			return string(b)
		}
		if time.Now().After(deadline) {
			a.t.Fatalf("%s never wrote %s", p.Name, file)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// report is a script that copies what the container sees into /out, each
// file whole once it appears, then stays.
const report = "cat /etc/hosts > /out/.hosts && mv /out/.hosts /out/hosts; hostname > /out/.hostname && mv /out/.hostname /out/hostname; while true; do sleep 1; done"

const managedLocalhost = "# Kubernetes-managed hosts file.\n" +
	"127.0.0.1\tlocalhost\n" +
	"::1\tlocalhost ip6-localhost ip6-loopback\n" +
	"fe00::0\tip6-localnet\n" +
	"fe00::0\tip6-mcastprefix\n" +
	"fe00::1\tip6-allnodes\n" +
	"fe00::2\tip6-allrouters\n"

var aliasLines = []string{
	"hostAliases:",
	"- {ip: 192.0.2.1, hostnames: [foo.local, bar.local]}",
	"- {ip: 2001:db8::1, hostnames: [v6.local]}",
}

const aliasEntries = "\n# Entries added by HostAliases.\n" +
	"192.0.2.1\tfoo.local\tbar.local\n" +
	"2001:db8::1\tv6.local\n"

func TestContractEtcHosts(t *testing.T) {
	a := startAgent(t, "--cluster-domain", "cluster.local")
	a.writeManifest("named.yaml", contractPod("named", "Always", report,
		append([]string{"hostname: web-0", "subdomain: sub"}, aliasLines...), nil))
	a.writeManifest("plain.yaml", contractPod("plain", "Always", report, nil, nil))
	a.writeManifest("hostnet.yaml", contractPod("hostnet", "Always", report, append([]string{"hostNetwork: true"}, aliasLines...), nil))

	p := a.waitRunning("named", 60*time.Second)
	want := managedLocalhost + p.Status.PodIP + "\tweb-0.sub.default.svc.cluster.local\tweb-0\n" + aliasEntries
	if got := a.seen(p, "hosts"); got != want {
		t.Errorf("named: /etc/hosts\n%s\nwant\n%s", got, want)
	}

	p = a.waitRunning("plain", 60*time.Second)
	want = managedLocalhost + p.Status.PodIP + "\tplain-" + nodeName + "\n"
	if got := a.seen(p, "hosts"); got != want {
		t.Errorf("plain: /etc/hosts\n%s\nwant\n%s", got, want)
	}

	p = a.waitRunning("hostnet", 60*time.Second)
	node, err := os.ReadFile("/etc/hosts")
	if err != nil {
		t.Fatal(err)
	}
	want = "# Kubernetes-managed hosts file (host network).\n" + string(node) + aliasEntries
	if got := a.seen(p, "hosts"); got != want {
		t.Errorf("hostnet: /etc/hosts\n%s\nwant\n%s", got, want)
	}
}

func TestContractHostname(t *testing.T) {
	a := startAgent(t, "--cluster-domain", "cluster.local")
	a.writeManifest("short.yaml", contractPod("short", "Always", report, []string{"hostname: web-0", "subdomain: sub"}, nil))
	a.writeManifest("fqdn.yaml", contractPod("fqdn", "Always", report,
		[]string{"hostname: web-0", "subdomain: sub", "setHostnameAsFQDN: true"}, nil))
	// 36 + len(".sub.default.svc.cluster.local") = 66: more than the
	// kernel's 64.
	long := strings.Repeat("h", 36)
	a.writeManifest("toolong.yaml", contractPod("toolong", "Always", report,
		[]string{"hostname: " + long, "subdomain: sub", "setHostnameAsFQDN: true"}, nil))
	a.writeManifest("hostnet.yaml", contractPod("hostnet", "Always", report,
		[]string{"hostNetwork: true", "hostname: web-0", "subdomain: sub", "setHostnameAsFQDN: true"}, nil))

	p := a.waitRunning("short", 60*time.Second)
	if got := a.seen(p, "hostname"); got != "web-0\n" {
		t.Errorf("short: hostname %q, want web-0", got)
	}
	p = a.waitRunning("fqdn", 60*time.Second)
	if got := a.seen(p, "hostname"); got != "web-0.sub.default.svc.cluster.local\n" {
		t.Errorf("fqdn: hostname %q, want the FQDN", got)
	}
	// A host-network pod has the node's hostname: it has no UTS namespace
	// of its own.
	p = a.waitRunning("hostnet", 60*time.Second)
	node, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	if got := a.seen(p, "hostname"); got != node+"\n" {
		t.Errorf("hostnet: hostname %q, want the node's %q", got, node)
	}

	msg := fmt.Sprintf("failed to construct FQDN from pod hostname and cluster domain, FQDN %s.sub.default.svc.cluster.local is too long (64 characters is the max, 66 characters requested)", long)
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(a.out.String(), msg) {
		if time.Now().After(deadline) {
			t.Fatalf("podline's log never said %q", msg)
		}
		time.Sleep(50 * time.Millisecond)
	}
	p = a.waitPod("toolong", "listed", 10*time.Second, func(*v1.Pod) bool { return true })
	if p.Status.Phase != v1.PodPending || len(runtimePods(t, string(p.UID))) != 0 {
		t.Errorf("toolong: phase %s with %d sandboxes; want Pending and none", p.Status.Phase, len(runtimePods(t, string(p.UID))))
	}
}
