package stages_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podline/podline/cri"
	"github.com/podline/podline/cri/fake"
	"github.com/podline/podline/stages"
)

// climbTo is a relative path that, joined below any directory, lands on
// the absolute path target: enough ".." to reach / from any depth.
func climbTo(target string) string {
	return "x" + strings.Repeat("/..", 64) + target
}

// sentinelDir makes dir with a file in it and returns the file.
func sentinelDir(t *testing.T, dir string) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(dir, "sentinel")
	if err := os.WriteFile(f, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	return f
}

// Runtime labels are whatever is in the runtime: an orphan whose labels
// carry a path is removed from the runtime, and nothing on disk is
// touched through the path.
func TestOrphanWithUnsafeLabelsTouchesNoPath(t *testing.T) {
	sock, srv := fake.Listen(t, fake.Options{})
	base := t.TempDir()
	node := &stages.Node{
		Name: "node-a", IPs: []string{"192.0.2.10"}, CPUMilli: 4000, MemoryBytes: 8 << 30,
		RootDir: filepath.Join(base, "root"), LogsDir: filepath.Join(base, "logs"),
	}
	h := newHarness(t, harnessOpts{socket: sock, srv: srv, node: node})

	target := filepath.Join(base, "target")
	keep := []string{sentinelDir(t, target), sentinelDir(t, target+"_u-named")}
	orphans := []struct{ uid, name, namespace string }{
		// The UID itself climbs out of the pod, log and cgroup directories.
		{climbTo(target), "orphan", "default"},
		// A safe UID, but a name label that moves the log directory.
		{"u-named", climbTo(target), "default"},
		{"u-ns", "orphan", climbTo(target)},
	}
	ctx := context.Background()
	for _, o := range orphans {
		_, err := h.rt.RunPodSandbox(ctx, &runtimeapi.PodSandboxConfig{
			Metadata: &runtimeapi.PodSandboxMetadata{Name: "orphan", Namespace: "default", Uid: o.uid},
			Labels:   map[string]string{cri.LabelPodUID: o.uid, cri.LabelPodName: o.name, cri.LabelPodNamespace: o.namespace},
		}, "")
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := h.relist.Relist(ctx); err != nil {
		t.Fatal(err)
	}
	h.pipe.SourcesReady()
	for _, o := range orphans {
		h.waitGone(types.UID(o.uid))
	}
	if n := srv.Calls("RemovePodSandbox"); n != int64(len(orphans)) {
		t.Errorf("RemovePodSandbox called %d times, want %d", n, len(orphans))
	}
	for _, f := range keep {
		if data, err := os.ReadFile(f); err != nil || string(data) != "keep" {
			t.Errorf("%s outside the root and log directories: %q, %v", f, data, err)
		}
	}
}
