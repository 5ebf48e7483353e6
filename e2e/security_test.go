//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/podline/podline/machine"
)

// secContainer is one container of a securityPod: its securityContext in
// flow YAML ("" for none), the script it runs before it sleeps, and its
// volumeMounts in flow YAML ("" for none).
type secContainer struct {
	name, securityContext, script, mounts string
}

// securityPod renders a static pod whose containers each print what they
// see as KEY=value lines, then sleep. podSecurity and extra (more spec
// lines, e.g. volumes) may be empty.
func securityPod(name, podSecurity, extra string, containers ...secContainer) string {
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: v1\nkind: Pod\nmetadata:\n  name: %s\nspec:\n  terminationGracePeriodSeconds: 2\n", name)
	if podSecurity != "" {
		fmt.Fprintf(&b, "  securityContext: %s\n", podSecurity)
	}
	b.WriteString(extra)
	b.WriteString("  containers:\n")
	for _, c := range containers {
		fmt.Fprintf(&b, "  - name: %s\n    image: %s\n    command: [\"sh\", \"-c\", %q]\n", c.name, busybox,
			"trap 'exit 0' TERM; "+c.script+"; echo DONE=1; while true; do sleep 1; done")
		if c.securityContext != "" {
			fmt.Fprintf(&b, "    securityContext: %s\n", c.securityContext)
		}
		if c.mounts != "" {
			fmt.Fprintf(&b, "    volumeMounts: %s\n", c.mounts)
		}
	}
	return b.String()
}

// reported waits until the container has printed all it reports and
// returns its KEY=value lines.
func (a *agent) reported(p *v1.Pod, container string) map[string]string {
	a.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		log := a.readLog(p, container, 0)
		if strings.Contains(log, "DONE=1") {
			out := map[string]string{}
			for _, line := range strings.Split(log, "\n") {
				// CRI log lines: <time> <stream> <tag> <text>.
				fields := strings.SplitN(line, " ", 4)
				if len(fields) < 4 {
					continue
				}
				if k, v, ok := strings.Cut(fields[3], "="); ok {
					out[k] = strings.TrimSpace(v)
				}
			}
			return out
		}
		if time.Now().After(deadline) {
			a.t.Fatalf("%s did not report; log %q", container, log)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitRunningOrRefused waits until each named container of the pod either
// runs or is waiting in CreateContainerConfigError, and returns the pod.
func (a *agent) waitRunningOrRefused(name string, running, refused []string) *v1.Pod {
	a.t.Helper()
	return a.waitPod(name, fmt.Sprintf("%v running and %v refused", running, refused), 60*time.Second, func(p *v1.Pod) bool {
		n := 0
		for _, cs := range p.Status.ContainerStatuses {
			switch {
			case slices.Contains(running, cs.Name) && cs.State.Running != nil:
				n++
			case slices.Contains(refused, cs.Name) && cs.State.Waiting != nil && cs.State.Waiting.Reason == "CreateContainerConfigError":
				n++
			}
		}
		return n == len(running)+len(refused)
	})
}

func waitingMessage(p *v1.Pod, container string) string {
	for _, cs := range p.Status.ContainerStatuses {
		if cs.Name == container && cs.State.Waiting != nil {
			return cs.State.Waiting.Message
		}
	}
	return ""
}

// runAsNonRoot is checked against the image's user before the container
// is made: busybox runs as root, so a container that names no user is
// refused with the kubelet's message, as is one asking for uid 0; one
// with a user of its own runs. The old code created and ran all three,
// as root.
func TestSecurityRunAsNonRoot(t *testing.T) {
	a := startAgent(t)
	a.writeManifest("nonroot.yaml", securityPod("nonroot", "{runAsNonRoot: true}", "",
		secContainer{"image-root", "", "id -u", ""},
		secContainer{"uid-zero", "{runAsUser: 0}", "id -u", ""},
		secContainer{"uid-1000", "{runAsUser: 1000}", "echo UID=$(id -u)", ""},
	))
	p := a.waitRunningOrRefused("nonroot", []string{"uid-1000"}, []string{"image-root", "uid-zero"})
	ref := fmt.Sprintf("%q", fmt.Sprintf("nonroot-%s_default(%s)", nodeName, p.UID))
	want := map[string]string{
		"image-root": "container has runAsNonRoot and image will run as root (pod: " + ref + ", container: image-root)",
		"uid-zero":   "container's runAsUser breaks non-root policy (pod: " + ref + ", container: uid-zero)",
	}
	for name, msg := range want {
		if got := waitingMessage(p, name); got != msg {
			t.Errorf("%s: waiting message %q, want %q", name, got, msg)
		}
	}
	for _, cs := range p.Status.ContainerStatuses {
		if want[cs.Name] != "" && (cs.ContainerID != "" || cs.RestartCount != 0) {
			t.Errorf("%s: a container was created: %+v", cs.Name, cs)
		}
	}
	if got := a.reported(p, "uid-1000")["UID"]; got != "1000" {
		t.Errorf("uid-1000 runs as %q", got)
	}
}

// The user, group and groups the pod and its containers ask for are the
// ones `id` sees, fsGroup among the groups, so a container of a pod with
// only an fsGroup reads a file its group may read; a runAsGroup without
// a runAsUser takes the image's user. The old code gave no fsGroup (the
// file was unreadable) and refused the lone group at the sandbox ("user
// group is specified without user").
func TestSecurityIdentity(t *testing.T) {
	shared := t.TempDir()
	secret := filepath.Join(shared, "group-only")
	if err := os.WriteFile(secret, []byte("for group 2000"), 0o640); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(secret, 0, 2000); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(shared, 0o755); err != nil {
		t.Fatal(err)
	}
	volume := fmt.Sprintf("  volumes:\n  - name: shared\n    hostPath: {path: %s}\n", shared)
	const ids = "echo UID=$(id -u); echo GID=$(id -g); echo GROUPS=$(id -G)"
	const read = "; if cat /shared/group-only >/dev/null 2>&1; then echo READ=yes; else echo READ=no; fi"
	const mount = "[{name: shared, mountPath: /shared, readOnly: true}]"
	a := startAgent(t)
	a.writeManifest("ids.yaml", securityPod("ids",
		"{runAsUser: 1000, runAsGroup: 3000, fsGroup: 2000, supplementalGroups: [4000, 5000]}", volume,
		secContainer{"pod-ids", "", ids + read, mount},
		secContainer{"own-ids", "{runAsUser: 1001, runAsGroup: 3001}", ids, ""},
	))
	a.writeManifest("fsgroup.yaml", securityPod("fsgroup", "{runAsUser: 1000, fsGroup: 2000}", volume,
		secContainer{"app", "", ids + read, mount}))
	a.writeManifest("lonegroup.yaml", securityPod("lonegroup", "{runAsGroup: 3000}", "", secContainer{"app", "", ids, ""}))

	check := func(pod, container, uid, gid string, groups []string, read string) {
		t.Helper()
		p := a.waitRunning(pod, 60*time.Second)
		got := a.reported(p, container)
		// id -G lists the primary group first; the kernel keeps the rest
		// sorted, and the runtime adds the primary group to them.
		gotGroups := strings.Fields(got["GROUPS"])
		slices.Sort(gotGroups)
		gotGroups = slices.Compact(gotGroups)
		slices.Sort(groups)
		if got["UID"] != uid || got["GID"] != gid || !slices.Equal(gotGroups, groups) || got["READ"] != read {
			t.Errorf("%s/%s: uid %s gid %s groups %v read %q, want %s %s %v %q", pod, container,
				got["UID"], got["GID"], gotGroups, got["READ"], uid, gid, groups, read)
		}
	}
	check("ids", "pod-ids", "1000", "3000", []string{"2000", "3000", "4000", "5000"}, "yes")
	check("ids", "own-ids", "1001", "3001", []string{"2000", "3001", "4000", "5000"}, "")
	check("fsgroup", "app", "1000", "0", []string{"0", "2000"}, "yes")
	check("lonegroup", "app", "0", "3000", []string{"3000"}, "")
}

// readOnlyRootFilesystem, capabilities and allowPrivilegeEscalation as
// the container's process sees them in /proc/self/status. The old code
// mapped these already; this keeps them so.
func TestSecurityFilesystemCapabilitiesPrivileges(t *testing.T) {
	const status = "echo CAPEFF=$(awk '/^CapEff/ {print $2}' /proc/self/status); echo NONEWPRIVS=$(awk '/^NoNewPrivs/ {print $2}' /proc/self/status)"
	const write = "; if touch /probe 2>/dev/null; then echo WRITE=ok; else echo WRITE=refused; fi"
	a := startAgent(t)
	a.writeManifest("privs.yaml", securityPod("privs", "", "",
		secContainer{"plain", "", status + write, ""},
		secContainer{"readonly", "{readOnlyRootFilesystem: true}", status + write, ""},
		secContainer{"nocaps", "{capabilities: {drop: [ALL]}}", status, ""},
		secContainer{"netadmin", "{capabilities: {drop: [ALL], add: [NET_ADMIN]}}", status, ""},
		secContainer{"nonewprivs", "{allowPrivilegeEscalation: false}", status, ""},
	))
	p := a.waitRunning("privs", 60*time.Second)
	f := func(container, key, want string) {
		t.Helper()
		if got := a.reported(p, container)[key]; got != want {
			t.Errorf("%s: %s=%q, want %q", container, key, got, want)
		}
	}
	f("plain", "WRITE", "ok")
	f("readonly", "WRITE", "refused")
	f("nocaps", "CAPEFF", "0000000000000000")
	f("netadmin", "CAPEFF", "0000000000001000") // CAP_NET_ADMIN is bit 12
	f("plain", "NONEWPRIVS", "0")
	f("nonewprivs", "NONEWPRIVS", "1")
	if caps := a.reported(p, "plain")["CAPEFF"]; caps == "0000000000000000" || caps == "" {
		t.Errorf("plain: CapEff %q, want the runtime's default set", caps)
	}
}

// seccompProfile: the container's over the pod's, none for containers
// that name none, and Localhost profiles read beneath <root-dir>/seccomp. Seccomp 2 in /proc/self/status is a filter, 0 none.
// The old code gave the runtime no profile: every container ran with 0.
func TestSecuritySeccomp(t *testing.T) {
	const seccomp = "echo SECCOMP=$(awk '/^Seccomp:/ {print $2}' /proc/self/status)"
	const mkdir = "; if mkdir /tmp/probe 2>/dev/null; then echo MKDIR=ok; else echo MKDIR=refused; fi"
	a := startAgent(t)
	// A profile that allows everything but mkdir, where the kubelet looks
	// for it: <root-dir>/seccomp/<localhostProfile>.
	if err := os.MkdirAll(filepath.Join(a.root, "seccomp", "e2e"), 0o755); err != nil {
		t.Fatal(err)
	}
	profile := `{"defaultAction": "SCMP_ACT_ALLOW", "syscalls": [{"names": ["mkdir", "mkdirat"], "action": "SCMP_ACT_ERRNO"}]}`
	if err := os.WriteFile(filepath.Join(a.root, "seccomp", "e2e", "no-mkdir.json"), []byte(profile), 0o644); err != nil {
		t.Fatal(err)
	}
	a.writeManifest("seccomp.yaml", securityPod("seccomp", "{seccompProfile: {type: RuntimeDefault}}", "",
		secContainer{"pod-default", "", seccomp, ""},
		secContainer{"unconfined", "{seccompProfile: {type: Unconfined}}", seccomp, ""},
		secContainer{"localhost", "{seccompProfile: {type: Localhost, localhostProfile: e2e/no-mkdir.json}}", seccomp + mkdir, ""},
	))
	a.writeManifest("noprofile.yaml", securityPod("noprofile", "", "", secContainer{"app", "", seccomp + mkdir, ""}))
	f := func(pod, container, key, want string) {
		t.Helper()
		p := a.waitRunning(pod, 60*time.Second)
		if got := a.reported(p, container)[key]; got != want {
			t.Errorf("%s/%s: %s=%q, want %q", pod, container, key, got, want)
		}
	}
	f("seccomp", "pod-default", "SECCOMP", "2")
	f("seccomp", "unconfined", "SECCOMP", "0")
	f("seccomp", "localhost", "SECCOMP", "2")
	f("seccomp", "localhost", "MKDIR", "refused")
	f("noprofile", "app", "SECCOMP", "0")
	f("noprofile", "app", "MKDIR", "ok")
}

// --seccomp-default confines the containers that name no profile with the
// runtime's; one that asks for Unconfined stays so. The old code had no
// such flag.
func TestSecuritySeccompDefault(t *testing.T) {
	const seccomp = "echo SECCOMP=$(awk '/^Seccomp:/ {print $2}' /proc/self/status)"
	a := startAgent(t, "--seccomp-default")
	a.writeManifest("noprofile.yaml", securityPod("noprofile", "", "", secContainer{"app", "", seccomp, ""}))
	a.writeManifest("optout.yaml", securityPod("optout", "", "", secContainer{"app", "{seccompProfile: {type: Unconfined}}", seccomp, ""}))
	for pod, want := range map[string]string{"noprofile": "2", "optout": "0"} {
		p := a.waitRunning(pod, 60*time.Second)
		if got := a.reported(p, "app")["SECCOMP"]; got != want {
			t.Errorf("%s: Seccomp %q, want %q", pod, got, want)
		}
	}
}

// The default procMount hides and write-protects the /proc and /sys paths
// Docker and the kubelet do (/proc/keys becomes /dev/null, /proc/sys is
// read-only; this kernel has no /proc/kcore); Unmasked needs a user namespace podline does not make, so
// it is refused. The old code gave the runtime no masked paths, and
// containerd then masks nothing.
func TestSecurityProcMount(t *testing.T) {
	const probe = "if [ -c /proc/keys ]; then echo KEYS=masked; else echo KEYS=visible; fi; " +
		"echo SYSFS=$(awk '$2 == \"/proc/sys\" {split($4, o, \",\"); print o[1]}' /proc/mounts)"
	a := startAgent(t)
	a.writeManifest("procmount.yaml", securityPod("procmount", "", "",
		secContainer{"default", "", probe, ""},
		secContainer{"explicit", "{procMount: Default}", probe, ""},
		secContainer{"unmasked", "{procMount: Unmasked}", probe, ""},
	))
	p := a.waitPod("procmount", "default and explicit running", 60*time.Second, func(p *v1.Pod) bool {
		n := 0
		for _, cs := range p.Status.ContainerStatuses {
			if cs.Name != "unmasked" && cs.State.Running != nil {
				n++
			}
		}
		return n == 2
	})
	for _, c := range []string{"default", "explicit"} {
		got := a.reported(p, c)
		if got["KEYS"] != "masked" || got["SYSFS"] != "ro" {
			t.Errorf("%s: /proc/keys %s, /proc/sys %q; want masked and ro", c, got["KEYS"], got["SYSFS"])
		}
	}
	p = a.waitRunningOrRefused("procmount", []string{"default", "explicit"}, []string{"unmasked"})
	const refusal = "procMount Unmasked needs a user namespace of the pod's own (hostUsers: false), which podline does not create"
	if got := waitingMessage(p, "unmasked"); got != refusal {
		t.Errorf("unmasked: waiting message %q, want %q", got, refusal)
	}
}

// A pod asking for an AppArmor profile on a host without AppArmor is
// refused at admission as the kubelet refuses it (reason AppArmor), by its
// field or by the older annotation; Unconfined asks for nothing and runs.
// The old code ignored the profiles and ran such pods unconfined.
func TestSecurityAppArmor(t *testing.T) {
	if machine.AppArmorEnabled() {
		t.Skip("this host enforces AppArmor; the test is of hosts without it (the harness's runtime runs with disable_apparmor)")
	}
	a := startAgent(t)
	a.writeManifest("field.yaml", securityPod("field", "", "", secContainer{"app", "{appArmorProfile: {type: RuntimeDefault}}", "true", ""}))
	a.writeManifest("annotation.yaml", strings.Replace(securityPod("annotation", "", "", secContainer{"app", "", "true", ""}),
		"metadata:\n", "metadata:\n  annotations: {container.apparmor.security.beta.kubernetes.io/app: runtime/default}\n", 1))
	a.writeManifest("unconfined.yaml", securityPod("unconfined", "{appArmorProfile: {type: Unconfined}}", "", secContainer{"app", "", "true", ""}))
	for _, name := range []string{"field", "annotation"} {
		p := a.waitPod(name, "rejected", 60*time.Second, func(p *v1.Pod) bool { return p.Status.Phase == v1.PodFailed })
		if p.Status.Reason != "AppArmor" || p.Status.Message != "Cannot enforce AppArmor: AppArmor is not enabled on the host" {
			t.Errorf("%s: reason %q message %q", name, p.Status.Reason, p.Status.Message)
		}
		if n := len(runtimePods(t, string(p.UID))); n != 0 {
			t.Errorf("%s: %d sandboxes made for a rejected pod", name, n)
		}
	}
	a.waitRunning("unconfined", 60*time.Second)
}
