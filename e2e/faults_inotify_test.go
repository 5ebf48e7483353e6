//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
)

// At the inotify instance limit podline has no inotify at all: the file
// source rescans and the cgroup source is off until an instance is free (it
// is tried again every 10 s); the CRI and eBPF sources carry the exits. When
// instances are free again the file source takes one at its next period.
func TestFaultInotifyInstanceLimit(t *testing.T) {
	restore := setSysctl(t, "fs/inotify/max_user_instances", "1")
	a := startAgent(t)
	eventually(t, 10*time.Second, "podline said it has no inotify", func() (bool, string) {
		out := a.out.String()
		return strings.Contains(out, "inotify unavailable") && strings.Contains(out, "cgroup notification source unavailable") &&
			a.metric("podline_source_file_unwatched") == 1, out
	})
	a.writeManifest("limited.yaml", pod("limited", "Never", "while true; do sleep 1; done"))
	started := time.Now()
	p := a.waitRunning("limited", 60*time.Second)
	t.Logf("manifest written → Running without inotify: %s (rescan period 2s)", time.Since(started))
	killed := time.Now()
	a.killMain(p)
	p = a.waitPod("limited", "Failed", 10*time.Second, func(p *v1.Pod) bool { return p.Status.Phase == v1.PodFailed })
	t.Logf("SIGKILL → Failed in /pods without the cgroup source: %s", time.Since(killed))
	expectExit(t, p, 137)

	restore()
	freed := time.Now()
	eventually(t, 30*time.Second, "the file source took an inotify instance", func() (bool, string) {
		f := a.metric("podline_source_file_unwatched")
		return f == 0, fmt.Sprintf("unwatched manifest path %v", f)
	})
	t.Logf("instances free → manifest path watched again after %s", time.Since(freed))
}

// setSysctl writes value to /proc/sys/name and returns a function that
// puts the old value back; the test's cleanup calls it too.
func setSysctl(t *testing.T, name, value string) (restore func()) {
	t.Helper()
	file := "/proc/sys/" + name
	old, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	restore = func() {
		once.Do(func() {
			if err := os.WriteFile(file, old, 0); err != nil {
				t.Errorf("restore %s to %s: %v", name, strings.TrimSpace(string(old)), err)
			}
		})
	}
	t.Cleanup(restore)
	if err := os.WriteFile(file, []byte(value), 0); err != nil {
		t.Fatal(err)
	}
	return restore
}
