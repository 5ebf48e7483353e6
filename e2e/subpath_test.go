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

// TestSubPathSymlinkEscape: an init container plants symlinks in an
// emptyDir, as any container of the pod can; the app containers mounting
// them by subPath must get the volume's own files or nothing, never the
// host's.
func TestSubPathSymlinkEscape(t *testing.T) {
	hostDir := t.TempDir()
	if err := os.WriteFile(filepath.Join(hostDir, "secret"), []byte("host secret"), 0o644); err != nil {
		t.Fatal(err)
	}
	a := startAgent(t)
	a.writeManifest("subpath.yaml", fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: subpath
spec:
  terminationGracePeriodSeconds: 2
  volumes:
  - name: scratch
    emptyDir: {}
  initContainers:
  - name: plant
    image: %[1]s
    command: ["sh", "-c", "ln -s / /scratch/root && ln -s %[2]s /scratch/hostdir && ln -s ../../../../../../../.. /scratch/climb && mkdir /scratch/ok && echo mine > /scratch/ok/f && ln -s ok /scratch/alias"]
    volumeMounts:
    - {name: scratch, mountPath: /scratch}
  containers:
  - name: root
    image: %[1]s
    command: ["sh", "-c", "cat /host/etc/hostname; sleep 3600"]
    volumeMounts:
    - {name: scratch, mountPath: /host, subPath: root}
  - name: hostdir
    image: %[1]s
    command: ["sh", "-c", "cat /host/secret; sleep 3600"]
    volumeMounts:
    - {name: scratch, mountPath: /host, subPath: hostdir}
  - name: mkdir
    image: %[1]s
    command: ["sh", "-c", "sleep 3600"]
    volumeMounts:
    - {name: scratch, mountPath: /host, subPath: hostdir/planted}
  - name: climb
    image: %[1]s
    command: ["sh", "-c", "sleep 3600"]
    volumeMounts:
    - {name: scratch, mountPath: /host, subPath: climb}
  - name: legit
    image: %[1]s
    securityContext: {runAsUser: 1000}
    command: ["sh", "-c", "trap 'exit 0' TERM; cat /data/f && echo written > /made/by-1000 && while true; do sleep 1; done"]
    volumeMounts:
    - {name: scratch, mountPath: /data, subPath: alias}
    - {name: scratch, mountPath: /made, subPath: new/dir}
`, busybox, hostDir))

	refused := []string{"root", "hostdir", "mkdir", "climb"}
	p := a.waitPod("subpath", "legit Running and the rest refused", 60*time.Second, func(p *v1.Pod) bool {
		n := 0
		for _, cs := range p.Status.ContainerStatuses {
			switch {
			case cs.Name == "legit" && cs.State.Running != nil:
				n++
			case cs.State.Waiting != nil && cs.State.Waiting.Reason == "CreateContainerConfigError":
				n++
			}
		}
		return n == len(refused)+1
	})
	for _, cs := range p.Status.ContainerStatuses {
		if cs.Name == "legit" {
			continue
		}
		msg := cs.State.Waiting.Message
		if !strings.Contains(msg, `subPath of volumeMount "scratch"`) || !strings.Contains(msg, "resolves outside the volume") {
			t.Errorf("%s: message %q does not say which subPath escapes", cs.Name, msg)
		}
		if strings.Contains(msg, hostDir) {
			t.Errorf("%s: message %q names the host path", cs.Name, msg)
		}
		if cs.ContainerID != "" || cs.RestartCount != 0 {
			t.Errorf("%s: a container was created: %+v", cs.Name, cs)
		}
	}
	// Nothing reached the host: no directory made through the link, no
	// container read the host's files.
	if entries, _ := os.ReadDir(hostDir); len(entries) != 1 {
		t.Errorf("the host directory changed: %v", entries)
	}
	deadline := time.Now().Add(10 * time.Second)
	for !contains(a.readLog(p, "legit", 0), "mine") {
		if time.Now().After(deadline) {
			t.Fatalf("legit container did not read the volume's file; log %q", a.readLog(p, "legit", 0))
		}
		time.Sleep(20 * time.Millisecond)
	}
	for _, c := range refused {
		if log := a.readLog(p, c, 0); log != "" {
			t.Errorf("refused container %s ran and logged %q", c, log)
		}
	}
	// The subPath the non-root container asked for was made inside the
	// volume, writable by it.
	made := filepath.Join(a.root, "pods", string(p.UID), "volumes", "kubernetes.io~empty-dir", "scratch", "new", "dir", "by-1000")
	for {
		b, err := os.ReadFile(made)
		if err == nil && string(b) == "written\n" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("non-root container could not write into its made subPath: %q, %v", b, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
