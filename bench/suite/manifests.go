package main

import (
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// image is in the fake CRI's preloaded set and in the harness containerd.
const image = "docker.io/library/busybox:1.36"

// manifest is a pod that runs until deleted. Host network keeps a real
// start free of CNI (and is what the kubelet figures in TARGETS.md used);
// sleep as PID 1 ignores SIGTERM, so a grace period of one second keeps
// teardown short.
func manifest(name string) []byte {
	return fmt.Appendf(nil, `apiVersion: v1
kind: Pod
metadata:
  name: %s
spec:
  restartPolicy: Always
  hostNetwork: true
  terminationGracePeriodSeconds: 1
  containers:
  - name: app
    image: %s
    imagePullPolicy: IfNotPresent
    command: ["sleep", "86400"]
`, name, image)
}

// podWriter writes manifests into an agent's static pod directory and
// remembers when each became visible there.
type podWriter struct {
	dir      string
	manifest func(name string) []byte
	written  map[string]time.Time // by the pod's name as the agent shows it
	files    []string             // in the order written, for churn
}

func newPodWriter(dir string) *podWriter {
	return &podWriter{dir: dir, manifest: manifest, written: map[string]time.Time{}}
}

// add writes the manifest of pod name and returns the static pod's name,
// <name>-<node>.
func (w *podWriter) add(name string) (string, error) {
	// Write then rename, so a watcher never reads half a file.
	tmp := filepath.Join(w.dir, "."+name+".tmp")
	if err := os.WriteFile(tmp, w.manifest(name), 0o644); err != nil {
		return "", err
	}
	path := filepath.Join(w.dir, name+".yaml")
	if err := os.Rename(tmp, path); err != nil {
		return "", err
	}
	static := name + "-" + nodeName
	w.written[static] = time.Now()
	w.files = append(w.files, path)
	return static, nil
}

// removeOldest deletes the manifest written first and still present.
func (w *podWriter) removeOldest() error {
	if len(w.files) == 0 {
		return nil
	}
	path := w.files[0]
	w.files = w.files[1:]
	return os.Remove(path)
}

// removeAll deletes every manifest.
func (w *podWriter) removeAll() error {
	for _, p := range w.files {
		if err := os.Remove(p); err != nil && !os.IsNotExist(err) {
			return err
		}
	}
	w.files = nil
	return nil
}
