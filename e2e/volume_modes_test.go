//go:build e2e

package e2e

import (
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A container that runs as a non-root user and group reads its configMap,
// secret, downwardAPI and service account token files, and sees the modes
// and owners other nodes give them: `stat -L -c '%a %u %g'` from inside,
// with and without an fsGroup. Files whose mode keeps the user out stay
// unreadable. The group is not root's: root's group would read through
// the group bits of root's directories and hide a closed one.
func TestClusterVolumeModes(t *testing.T) {
	n := startNode(t)
	n.waitReady(60 * time.Second)
	cm := &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings", Namespace: n.name},
		Data: map[string]string{"greeting": "hello", "private": "p"}}
	if _, err := n.cp.admin.CoreV1().ConfigMaps(n.name).Create(apiCtx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	sec := &v1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "creds", Namespace: n.name},
		Data: map[string][]byte{"password": []byte("hunter2")}}
	if _, err := n.cp.admin.CoreV1().Secrets(n.name).Create(apiCtx, sec, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	const sa = "/var/run/secrets/kubernetes.io/serviceaccount"
	// Every volume has a file at the default 0644 and one whose own mode
	// keeps others out.
	paths := []string{
		"/etc/cfg", "/etc/cfg/..data", "/etc/cfg/greeting", "/etc/cfg/private",
		"/etc/sec", "/etc/sec/..data", "/etc/sec/password", "/etc/sec/private",
		"/etc/down", "/etc/down/name", "/etc/down/labels",
		sa, sa + "/token", sa + "/ca.crt",
	}
	cases := []struct {
		name string
		sc   *v1.PodSecurityContext
		// The container's uid, gid and whether it is in group 2000; for
		// each path "mode uid gid", and "read" or "denied" for "read <path>".
		want map[string]string
	}{{
		name: "modes-user",
		sc:   &v1.PodSecurityContext{RunAsUser: ptrTo[int64](1000), RunAsGroup: ptrTo[int64](3000)},
		want: map[string]string{
			"uid": "1000", "gid": "3000", "in 2000": "no",
			"/etc/cfg": "777 0 0", "/etc/cfg/..data": "755 0 0", "/etc/cfg/greeting": "644 0 0", "/etc/cfg/private": "600 0 0",
			"/etc/sec": "1777 0 0", "/etc/sec/..data": "755 0 0", "/etc/sec/password": "644 0 0", "/etc/sec/private": "400 0 0",
			"/etc/down": "777 0 0", "/etc/down/name": "644 0 0", "/etc/down/labels": "600 0 0",
			// The one user all containers run as owns the token.
			sa: "1777 0 0", sa + "/token": "600 1000 0", sa + "/ca.crt": "644 0 0",
			"read /etc/cfg/greeting": "read", "read /etc/cfg/private": "denied",
			"read /etc/sec/password": "read", "read /etc/sec/private": "denied",
			"read /etc/down/name": "read", "read /etc/down/labels": "denied",
			"read " + sa + "/token": "read", "read " + sa + "/ca.crt": "read",
		},
	}, {
		name: "modes-fsgroup",
		// supplementalGroups puts the user in the group itself, so this
		// tests the files, not how the container gets its groups.
		sc: &v1.PodSecurityContext{RunAsUser: ptrTo[int64](1000), RunAsGroup: ptrTo[int64](3000),
			FSGroup: ptrTo[int64](2000), SupplementalGroups: []int64{2000}},
		want: map[string]string{
			"uid": "1000", "gid": "3000", "in 2000": "yes",
			"/etc/cfg": "2777 0 2000", "/etc/cfg/..data": "2755 0 2000", "/etc/cfg/greeting": "644 0 2000", "/etc/cfg/private": "640 0 2000",
			"/etc/sec": "3777 0 2000", "/etc/sec/..data": "2755 0 2000", "/etc/sec/password": "644 0 2000", "/etc/sec/private": "440 0 2000",
			"/etc/down": "2777 0 2000", "/etc/down/name": "644 0 2000", "/etc/down/labels": "640 0 2000",
			sa: "3777 0 2000", sa + "/token": "640 1000 2000", sa + "/ca.crt": "644 0 2000",
			"read /etc/cfg/greeting": "read", "read /etc/cfg/private": "read",
			"read /etc/sec/password": "read", "read /etc/sec/private": "read",
			"read /etc/down/name": "read", "read /etc/down/labels": "read",
			"read " + sa + "/token": "read", "read " + sa + "/ca.crt": "read",
		},
	}}

	var script strings.Builder
	script.WriteString(`echo "uid: $(id -u)"; echo "gid: $(id -g)"; case " $(id -G) " in *" 2000 "*) echo 'in 2000: yes';; *) echo 'in 2000: no';; esac; `)
	for _, p := range paths {
		fmt.Fprintf(&script, "echo \"%s: $(stat -L -c '%%a %%u %%g' %s 2>&1)\"; ", p, p)
		if !strings.HasSuffix(p, "..data") {
			fmt.Fprintf(&script, "if cat %s >/dev/null 2>&1; then echo 'read %s: read'; else echo 'read %s: denied'; fi; ", p, p, p)
		}
	}
	script.WriteString("echo end-of-checks; while true; do sleep 1; done")

	yes := true
	created := map[string]*v1.Pod{}
	for _, c := range cases {
		p := n.apiPod(c.name, script.String())
		p.Spec.AutomountServiceAccountToken = &yes
		p.Spec.SecurityContext = c.sc
		p.Spec.Volumes = []v1.Volume{
			{Name: "cfg", VolumeSource: v1.VolumeSource{ConfigMap: &v1.ConfigMapVolumeSource{
				LocalObjectReference: v1.LocalObjectReference{Name: "settings"},
				Items: []v1.KeyToPath{
					{Key: "greeting", Path: "greeting"},
					{Key: "private", Path: "private", Mode: ptrTo[int32](0o600)},
				},
			}}},
			{Name: "sec", VolumeSource: v1.VolumeSource{Secret: &v1.SecretVolumeSource{
				SecretName: "creds",
				Items: []v1.KeyToPath{
					{Key: "password", Path: "password"},
					{Key: "password", Path: "private", Mode: ptrTo[int32](0o400)},
				},
			}}},
			{Name: "down", VolumeSource: v1.VolumeSource{DownwardAPI: &v1.DownwardAPIVolumeSource{Items: []v1.DownwardAPIVolumeFile{
				{Path: "name", FieldRef: &v1.ObjectFieldSelector{FieldPath: "metadata.name"}},
				{Path: "labels", FieldRef: &v1.ObjectFieldSelector{FieldPath: "metadata.labels"}, Mode: ptrTo[int32](0o600)},
			}}}},
		}
		p.Spec.Containers[0].VolumeMounts = []v1.VolumeMount{
			{Name: "cfg", MountPath: "/etc/cfg"},
			{Name: "sec", MountPath: "/etc/sec"},
			{Name: "down", MountPath: "/etc/down"},
		}
		created[c.name] = n.createPod(p)
	}

	for _, c := range cases {
		running := n.waitAPIPod(n.name, c.name, "Running", 60*time.Second, podRunning)
		var seen map[string]string
		eventually(t, 20*time.Second, c.name+" printed its checks", func() (bool, string) {
			log := n.agent.readLog(running, "app", 0)
			seen = logFields(log)
			_, done := seen["end-of-checks"]
			return done, log
		})
		var wrong []string
		for _, k := range sortedKeys(c.want) {
			if got := seen[k]; got != c.want[k] {
				wrong = append(wrong, fmt.Sprintf("%s: %q, want %q", k, got, c.want[k]))
			}
		}
		if len(wrong) > 0 {
			t.Errorf("%s:\n  %s", c.name, strings.Join(wrong, "\n  "))
		}
	}
}

// logFields reads "key: value" lines from a CRI log ("<time> stdout F
// <line>"); a line without ": " is a key with an empty value.
func logFields(log string) map[string]string {
	out := map[string]string{}
	for _, line := range strings.Split(log, "\n") {
		parts := strings.SplitN(line, " ", 4)
		if len(parts) < 4 {
			continue
		}
		k, v, _ := strings.Cut(parts[3], ": ")
		out[k] = v
	}
	return out
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func ptrTo[T any](v T) *T { return &v }

// A container that runs as a non-root user and group, in a pod with an
// fsGroup, writes into an emptyDir on disk and one in memory: the
// directories are the group's with setgid (2777, 3777 with the tmpfs's
// sticky bit), so what it writes is the group's too, in a subdirectory as
// well. Without an fsGroup the roots are 777 and 1777, root's.
func TestEmptyDirFSGroup(t *testing.T) {
	a := startAgent(t)
	script := `trap 'exit 0' TERM; ` +
		`for d in /scratch /mem; do echo "$d: $(stat -c '%a %u %g' $d)"; ` +
		`mkdir $d/sub && echo x > $d/sub/f && echo x > $d/f && ` +
		`echo "$d/f: $(stat -c '%u %g' $d/f)"; echo "$d/sub: $(stat -c '%a %u %g' $d/sub)"; echo "$d/sub/f: $(stat -c '%u %g' $d/sub/f)"; done; ` +
		`echo end-of-checks; while true; do sleep 1; done`
	manifest := func(name, podSC string) string {
		return fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: %s
spec:
  terminationGracePeriodSeconds: 2
  securityContext: %s
  volumes:
  - {name: scratch, emptyDir: {}}
  - {name: mem, emptyDir: {medium: Memory}}
  containers:
  - name: app
    image: %s
    command: ["sh", "-c", %q]
    volumeMounts:
    - {name: scratch, mountPath: /scratch}
    - {name: mem, mountPath: /mem}
`, name, podSC, busybox, script)
	}
	a.writeManifest("fsgroup.yaml", manifest("fsgroup", "{runAsUser: 1000, runAsGroup: 3000, fsGroup: 2000}"))
	a.writeManifest("nogroup.yaml", manifest("nogroup", "{runAsUser: 1000, runAsGroup: 3000}"))
	cases := map[string]map[string]string{
		"fsgroup": {
			"/scratch": "2777 0 2000", "/scratch/f": "1000 2000", "/scratch/sub": "2755 1000 2000", "/scratch/sub/f": "1000 2000",
			"/mem": "3777 0 2000", "/mem/f": "1000 2000", "/mem/sub": "2755 1000 2000", "/mem/sub/f": "1000 2000",
		},
		"nogroup": {
			"/scratch": "777 0 0", "/scratch/f": "1000 3000", "/scratch/sub": "755 1000 3000", "/scratch/sub/f": "1000 3000",
			"/mem": "1777 0 0", "/mem/f": "1000 3000", "/mem/sub": "755 1000 3000", "/mem/sub/f": "1000 3000",
		},
	}
	for _, name := range []string{"fsgroup", "nogroup"} {
		p := a.waitRunning(name, 60*time.Second)
		var seen map[string]string
		eventually(t, 20*time.Second, name+" printed its checks", func() (bool, string) {
			log := a.readLog(p, "app", 0)
			seen = logFields(log)
			_, done := seen["end-of-checks"]
			return done, log
		})
		var wrong []string
		for _, k := range sortedKeys(cases[name]) {
			if got := seen[k]; got != cases[name][k] {
				wrong = append(wrong, fmt.Sprintf("%s: %q, want %q", k, got, cases[name][k]))
			}
		}
		if len(wrong) > 0 {
			t.Errorf("%s:\n  %s", name, strings.Join(wrong, "\n  "))
		}
	}
}
