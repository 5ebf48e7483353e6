//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"
	v1 "k8s.io/api/core/v1"
)

// TestRecursiveReadOnlyMount: a hostPath with a filesystem mounted inside
// it, mounted readOnly into two containers. With recursiveReadOnly:
// Enabled the inner mount is read-only too; without it the inner mount
// stays writable, as a plain read-only bind leaves submounts.
func TestRecursiveReadOnlyMount(t *testing.T) {
	dir := t.TempDir()
	inner := filepath.Join(dir, "inner")
	if err := os.Mkdir(inner, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mount("tmpfs", inner, "tmpfs", 0, "mode=0777"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Unmount(inner, unix.MNT_DETACH) })

	a := startAgent(t)
	a.writeManifest("rro.yaml", fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: rro
spec:
  terminationGracePeriodSeconds: 2
  volumes:
  - name: host
    hostPath: {path: %[2]s}
  containers:
  - name: recursive
    image: %[1]s
    command: ["sh", "-c", "trap 'exit 0' TERM; touch /h/inner/r && echo wrote || echo refused; while true; do sleep 1; done"]
    volumeMounts:
    - {name: host, mountPath: /h, readOnly: true, recursiveReadOnly: Enabled}
  - name: plain
    image: %[1]s
    command: ["sh", "-c", "trap 'exit 0' TERM; touch /h/inner/p && echo wrote || echo refused; while true; do sleep 1; done"]
    volumeMounts:
    - {name: host, mountPath: /h, readOnly: true}
`, busybox, dir))
	p := a.waitPod("rro", "both containers running", 60*time.Second, func(p *v1.Pod) bool {
		n := 0
		for _, cs := range p.Status.ContainerStatuses {
			if cs.State.Running != nil {
				n++
			}
		}
		return n == 2
	})
	// CRI log lines end "stdout F <text>".
	want := map[string]string{"recursive": "F refused\n", "plain": "F wrote\n"}
	deadline := time.Now().Add(10 * time.Second)
	for c, w := range want {
		for !contains(a.readLog(p, c, 0), w) {
			if time.Now().After(deadline) {
				t.Fatalf("%s: log %q, want %q", c, a.readLog(p, c, 0), w)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	if _, err := os.Stat(filepath.Join(inner, "r")); err == nil {
		t.Error("the recursive read-only container wrote into the inner mount")
	}
}
