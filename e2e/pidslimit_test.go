//go:build e2e

package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// --pod-max-pids bounds the processes of a pod: its cgroup in the v1 pids
// hierarchy gets pids.max, and a container that forks past it is refused
// by the kernel, not by podline.
func TestPodMaxPidsBoundsForks(t *testing.T) {
	a := startAgent(t, "--pod-max-pids=32")
	a.writeManifest("forker.yaml", pod("forker", "Always",
		"i=0; while [ $i -lt 64 ]; do sleep 3600 & i=$((i+1)); done; while true; do sleep 1; done"))
	p := a.waitRunning("forker", 30*time.Second)
	dir := filepath.Join("/sys/fs/cgroup/pids", a.cgroup, "kubepods", "besteffort", "pod"+string(p.UID))
	if _, err := os.Stat(filepath.Join(dir, "pids.max")); os.IsNotExist(err) {
		t.Skipf("no v1 pids hierarchy at %s (a cgroup v2 host): %v", dir, err)
	}
	read := func(file string) string {
		b, err := os.ReadFile(filepath.Join(dir, file))
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(b))
	}
	if got := read("pids.max"); got != "32" {
		t.Fatalf("pids.max of %s = %s, want 32", dir, got)
	}
	// busybox's sh gives up at the first fork the kernel refuses.
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(a.readLog(p, "app", 0), "can't fork") {
		if time.Now().After(deadline) {
			t.Fatalf("no fork was refused; log %q", a.readLog(p, "app", 0))
		}
		time.Sleep(100 * time.Millisecond)
	}
}
