package sources

import (
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"
	"golang.org/x/sys/unix"
)

// TestFileSourceWithoutInotify: at the inotify instance limit the periodic
// rescans still find manifests, the gauge and one log line say so, and
// once an instance can be had again inotify takes over by itself.
func TestFileSourceWithoutInotify(t *testing.T) {
	const period = 50 * time.Millisecond
	h := newFileHarness(t, t.TempDir(), period)
	var limited atomic.Bool
	limited.Store(true)
	var tries atomic.Int32
	h.src.newWatcher = func() (*fsnotify.Watcher, error) {
		tries.Add(1)
		if limited.Load() {
			return nil, fmt.Errorf("inotify_init1: %w", unix.EMFILE)
		}
		return fsnotify.NewWatcher()
	}
	h.run()
	if got := fileUnwatched.Get(); got != 1 {
		t.Errorf("unwatched gauge = %v at the limit, want 1", got)
	}
	h.write("web.yaml", podYAML("web", "nginx:1"))
	if u := recv(t, h.m, 2*time.Second); describe(u) != "ADD file [default/web-node1]" {
		t.Fatalf("rescan without inotify: %s", describe(u))
	}
	// Several periods went by, each tried for an instance and failed.
	for tries.Load() < 3 {
		time.Sleep(period)
	}
	if n := strings.Count(h.logs.String(), "inotify unavailable"); n != 1 {
		t.Errorf("the degraded state was logged %d times, want once:\n%s", n, h.logs)
	}

	limited.Store(false)
	deadline := time.Now().Add(2 * time.Second)
	for fileUnwatched.Get() != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("still unwatched after the limit went:\n%s", h.logs)
		}
		time.Sleep(period)
	}
	if !strings.Contains(h.logs.String(), "watching manifest path again") {
		t.Errorf("recovery not logged:\n%s", h.logs)
	}
}
