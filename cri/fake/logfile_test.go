package fake

import (
	"os"
	"path/filepath"
	"testing"

	"google.golang.org/grpc/codes"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

func TestLogFiles(t *testing.T) {
	f := func(logFiles bool) {
		t.Helper()
		r := newRig(t, Options{LogFiles: logFiles})
		cfg := sandboxConfig("pod", nil)
		cfg.LogDirectory = filepath.Join(t.TempDir(), "pods", "default_pod_uid")
		// The agent makes the pod's log directory, as the kubelet does.
		if err := os.MkdirAll(cfg.LogDirectory, 0o755); err != nil {
			t.Fatal(err)
		}
		sb := r.runSandbox(t, cfg)
		id := r.createContainer(t, sb, containerConfig("app", nil))
		path := filepath.Join(cfg.LogDirectory, "app", "0.log")
		exists := func() bool {
			_, err := os.Stat(path)
			return err == nil
		}
		if exists() {
			t.Fatalf("log file before start (logFiles=%t)", logFiles)
		}
		reopen := func() error {
			_, err := r.rt.ReopenContainerLog(r.ctx, &runtimeapi.ReopenContainerLogRequest{ContainerId: id})
			return err
		}
		wantCode(t, reopen(), codes.FailedPrecondition) // not running yet
		r.startContainer(t, id)
		if exists() != logFiles {
			t.Fatalf("logFiles=%t: log file exists after start: %t", logFiles, exists())
		}
		os.Remove(path)
		wantCode(t, reopen(), codes.OK)
		if exists() != logFiles {
			t.Fatalf("logFiles=%t: log file exists after reopen: %t", logFiles, exists())
		}
		_, err := r.rt.ReopenContainerLog(r.ctx, &runtimeapi.ReopenContainerLogRequest{ContainerId: "nope"})
		wantCode(t, err, codes.NotFound)
		// A pod log directory the agent removed stays removed.
		if err := os.RemoveAll(cfg.LogDirectory); err != nil {
			t.Fatal(err)
		}
		if err := reopen(); logFiles && err == nil {
			t.Fatal("reopen after the pod log directory was removed succeeded")
		}
		if _, err := os.Stat(cfg.LogDirectory); !os.IsNotExist(err) {
			t.Fatalf("pod log directory came back: %v", err)
		}
	}
	f(true)
	f(false)
}
