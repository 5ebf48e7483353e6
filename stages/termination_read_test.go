package stages

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/podline/podline/pleg"
	"github.com/podline/podline/podspec"
)

// messageFixture is a pod whose container "app" exited, with its
// termination log and CRI log on a temporary disk.
type messageFixture struct {
	node *Node
	pod  *v1.Pod
	c    *pleg.Container
}

func newMessageFixture(t *testing.T, policy v1.TerminationMessagePolicy, exitCode int32) *messageFixture {
	t.Helper()
	base := t.TempDir()
	fx := &messageFixture{
		node: &Node{RootDir: filepath.Join(base, "root"), LogsDir: filepath.Join(base, "logs")},
		pod: unitPod(func(p *v1.Pod) {
			p.Spec.Containers[0].TerminationMessagePath = "/dev/termination-log"
			p.Spec.Containers[0].TerminationMessagePolicy = policy
		}),
		c: rtExited("c1", "sb1", "app", 2, exitCode, baseTime),
	}
	return fx
}

func (fx *messageFixture) termLog() string {
	return podspec.TerminationLogPath(fx.node, fx.pod.UID, "app", fx.c.Attempt)
}

func (fx *messageFixture) writeTermLog(t *testing.T, content string) {
	t.Helper()
	writeFile(t, fx.termLog(), content)
}

func (fx *messageFixture) writeLog(t *testing.T, content string) {
	t.Helper()
	writeFile(t, podspec.ContainerLogFile(fx.node, fx.pod, "app", fx.c.Attempt), content)
}

func (fx *messageFixture) read() string {
	msg, _ := readTerminationMessage(fx.node, fx.pod, &fx.pod.Spec.Containers[0], fx.c)
	return msg
}

func criLogLine(content string) string {
	return "2026-11-21T12:00:00.000000001Z stderr F " + content + "\n"
}

func TestReadTerminationMessage(t *testing.T) {
	file, fallback := v1.TerminationMessageReadFile, v1.TerminationMessageFallbackToLogsOnError
	check := func(name, got, want string) {
		t.Helper()
		if got != want {
			t.Errorf("%s: %q, want %q", name, got, want)
		}
	}

	fx := newMessageFixture(t, file, 3)
	fx.writeTermLog(t, "bye")
	check("the file", fx.read(), "bye")

	fx = newMessageFixture(t, file, 3)
	big := strings.Repeat("a", 6000) + strings.Repeat("z", 4000) + "END"
	fx.writeTermLog(t, big)
	check("a long file: its last 4096 bytes", fx.read(), big[len(big)-4096:])

	fx = newMessageFixture(t, file, 3)
	check("no file", fx.read(), "")

	fx = newMessageFixture(t, fallback, 3)
	fx.writeTermLog(t, "")
	fx.writeLog(t, criLogLine("starting")+criLogLine("fatal: no config"))
	check("empty file, failed, FallbackToLogsOnError: the log", fx.read(), "starting\nfatal: no config\n")

	fx = newMessageFixture(t, fallback, 3)
	fx.writeLog(t, criLogLine("from the log"))
	check("no file, failed, FallbackToLogsOnError: the log", fx.read(), "from the log\n")

	fx = newMessageFixture(t, fallback, 3)
	fx.writeTermLog(t, "from the file")
	fx.writeLog(t, criLogLine("from the log"))
	check("the file wins over the log", fx.read(), "from the file")

	fx = newMessageFixture(t, fallback, 0)
	fx.writeTermLog(t, "")
	fx.writeLog(t, criLogLine("from the log"))
	check("a success never reads the log", fx.read(), "")

	fx = newMessageFixture(t, fallback, 3)
	fx.writeTermLog(t, "")
	if got := fx.read(); !strings.HasPrefix(got, "Error on reading termination message from logs: ") {
		t.Errorf("no log: %q", got)
	}

	fx = newMessageFixture(t, file, 3)
	fx.pod.Spec.Containers[0].TerminationMessagePath = ""
	fx.writeTermLog(t, "unmounted")
	check("no termination path: no file is read", fx.read(), "")
}

func TestReadLogTailGrowsItsWindow(t *testing.T) {
	fx := newMessageFixture(t, v1.TerminationMessageFallbackToLogsOnError, 1)
	// A first line longer than the first window, then a short one: the
	// window grows until the long line is whole.
	long := strings.Repeat("x", 12<<10) + "LONG"
	fx.writeLog(t, criLogLine(long)+criLogLine("last"))
	want := (long + "\nlast\n")[len(long)+6-2048:]
	if got := fx.read(); got != want {
		t.Errorf("got %d bytes ending %q, want %d ending %q", len(got), got[max(len(got)-20, 0):], len(want), want[len(want)-20:])
	}
}

// The container controls its termination log: what it makes of it must
// neither leak host files nor cost podline more than the limit.
func TestReadTerminationMessageDistrustsTheContainer(t *testing.T) {
	fx := newMessageFixture(t, v1.TerminationMessageFallbackToLogsOnError, 1)
	secret := filepath.Join(t.TempDir(), "secret")
	writeFile(t, secret, "host secret")
	if err := os.MkdirAll(filepath.Dir(fx.termLog()), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, fx.termLog()); err != nil {
		t.Fatal(err)
	}
	got := fx.read()
	if strings.Contains(got, "host secret") || !strings.HasPrefix(got, "Error on reading termination log ") {
		t.Errorf("a symlink: %q", got)
	}

	fx = newMessageFixture(t, v1.TerminationMessageReadFile, 1)
	if err := os.MkdirAll(filepath.Dir(fx.termLog()), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(fx.termLog(), 0o666); err != nil {
		t.Fatal(err)
	}
	done := make(chan string)
	go func() { done <- fx.read() }()
	select {
	case got := <-done:
		if !strings.Contains(got, "not a regular file") {
			t.Errorf("a FIFO: %q", got)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a FIFO blocked the read")
	}

	// A gigabyte (sparse, so the test writes nothing): only its end is
	// read.
	fx = newMessageFixture(t, v1.TerminationMessageReadFile, 1)
	fx.writeTermLog(t, "")
	f, err := os.OpenFile(fx.termLog(), os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte("END"), 1<<30); err != nil {
		t.Fatal(err)
	}
	f.Close()
	var before, after syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &before)
	got = fx.read()
	syscall.Getrusage(syscall.RUSAGE_SELF, &after)
	if len(got) != podspec.MaxContainerMessage || !strings.HasSuffix(got, "END") {
		t.Errorf("a gigabyte: %d bytes ending %q", len(got), got[max(len(got)-3, 0):])
	}
	if grew := after.Maxrss - before.Maxrss; grew > 64<<10 { // KiB
		t.Errorf("reading a gigabyte file grew the resident set by %d KiB", grew)
	}
}
