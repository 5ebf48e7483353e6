//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A static manifest's uid names the pod's directory, log directory and
// cgroup. One that climbs out of --root-dir is refused with the field
// named, the pod never reaches the runtime, and nothing outside the root
// dir is made or removed, neither while the manifest is there nor after
// it goes.
func TestManifestUIDOutsideRootDirIsRejected(t *testing.T) {
	a := startAgent(t)
	target := t.TempDir()
	sentinel := filepath.Join(target, "sentinel")
	if err := os.WriteFile(sentinel, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	// Enough ".." to reach / from any --root-dir; the pod directory
	// <root>/pods/<uid> would be target itself.
	uid := "x" + strings.Repeat("/..", 32) + target
	a.writeManifest("escape.yaml", fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: escape
  uid: %q
spec:
  terminationGracePeriodSeconds: 5
  volumes:
  - name: scratch
    emptyDir: {}
  containers:
  - name: app
    image: %s
    command: ["sh", "-c", "trap 'exit 0' TERM; while true; do sleep 1; done"]
    volumeMounts:
    - {name: scratch, mountPath: /scratch}
`, uid, busybox))
	// A good pod beside it shows the directory was read and pods run.
	a.writeManifest("good.yaml", pod("good", "Always", "while true; do sleep 1; done"))
	a.waitRunning("good", 30*time.Second)

	file := filepath.Join(a.manifests, "escape.yaml")
	deadline := time.Now().Add(10 * time.Second)
	for !(contains(a.out.String(), file) && contains(a.out.String(), "metadata.uid: Invalid value")) {
		if time.Now().After(deadline) {
			// Not fatal: what the pod did to the disk says more.
			t.Errorf("podline's log does not name %s and metadata.uid", file)
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	checkNotRun := func(when string) {
		t.Helper()
		if ids := runtimePods(t, uid); len(ids) != 0 {
			t.Errorf("%s: sandboxes of the refused pod in the runtime: %v", when, ids)
		}
		if ids := sandboxesNamed(t, "escape-"+nodeName); len(ids) != 0 {
			t.Errorf("%s: sandboxes named escape-%s in the runtime: %v", when, nodeName, ids)
		}
		pods, err := a.pods()
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range pods {
			if p.Name == "escape-"+nodeName {
				t.Errorf("%s: the refused pod is listed with UID %q", when, p.UID)
			}
		}
		entries, err := os.ReadDir(target)
		if err != nil {
			t.Fatalf("%s: %v", when, err)
		}
		if len(entries) != 1 || entries[0].Name() != "sentinel" {
			var names []string
			for _, e := range entries {
				names = append(names, e.Name())
			}
			t.Errorf("%s: %s holds %v, want only the sentinel", when, target, names)
		}
		if data, err := os.ReadFile(sentinel); err != nil || string(data) != "keep" {
			t.Errorf("%s: sentinel %q, %v", when, data, err)
		}
	}
	checkNotRun("manifest present")

	// Removing the manifest must not tear down what a path built from the
	// uid would name.
	a.removeManifest("escape.yaml")
	time.Sleep(3 * time.Second) // an inotify event and a rescan have passed
	checkNotRun("manifest removed")
	a.waitRunning("good", time.Second)
}

// sandboxesNamed lists the runtime's sandboxes whose metadata has this pod
// name, whatever their labels say.
func sandboxesNamed(t *testing.T, name string) []string {
	t.Helper()
	sbs, err := runtime.ListPodSandbox(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, sb := range sbs {
		if sb.GetMetadata().GetName() == name {
			ids = append(ids, sb.Id)
		}
	}
	return ids
}
