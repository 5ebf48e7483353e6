package stages

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
	v1 "k8s.io/api/core/v1"

	"github.com/podline/podline/podspec"
)

// FallbackToLogsOnError reads the container's log as root, and any pod
// with a hostPath on the pod log directory can rework it: a link to
// another pod's log directory would put that pod's output in this pod's
// status, a device node would be opened. Neither is read, nor opened.
func TestTerminationMessageFromPlantedLog(t *testing.T) {
	f := func(name string, plant func(t *testing.T, logFile string) (watch string)) {
		t.Run(name, func(t *testing.T) {
			fx := newMessageFixture(t, v1.TerminationMessageFallbackToLogsOnError, 1)
			logFile := podspec.ContainerLogFile(fx.node, fx.pod, "app", fx.c.Attempt)
			watch := plant(t, logFile)
			fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
			if err != nil {
				t.Fatal(err)
			}
			defer unix.Close(fd)
			if _, err := unix.InotifyAddWatch(fd, watch, unix.IN_OPEN|unix.IN_DONT_FOLLOW); err != nil {
				t.Fatal(err)
			}
			got := fx.read()
			if strings.Contains(got, "other pod") || !strings.HasPrefix(got, "Error on reading termination message from logs: ") {
				t.Errorf("message %q, want an error", got)
			}
			if _, err := unix.Read(fd, make([]byte, 4096)); !errors.Is(err, unix.EAGAIN) {
				t.Errorf("%s was opened", watch)
			}
		})
	}
	f("container directory linked to another pod's", func(t *testing.T, logFile string) string {
		other := filepath.Join(t.TempDir(), "default_other_uid2", "app")
		writeFile(t, filepath.Join(other, filepath.Base(logFile)), criLogLine("the other pod's output"))
		if err := os.MkdirAll(filepath.Dir(filepath.Dir(logFile)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(other, filepath.Dir(logFile)); err != nil {
			t.Fatal(err)
		}
		return filepath.Join(other, filepath.Base(logFile))
	})
	f("device node", func(t *testing.T, logFile string) string {
		if err := os.MkdirAll(filepath.Dir(logFile), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := unix.Mknod(logFile, unix.S_IFCHR|0o644, int(unix.Mkdev(1, 3))); err != nil {
			t.Fatalf("mknod (the unit tests run as root): %v", err)
		}
		return logFile
	})
}
