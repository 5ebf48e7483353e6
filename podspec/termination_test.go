package podspec

import (
	"testing"

	v1 "k8s.io/api/core/v1"
)

func TestMessageBudget(t *testing.T) {
	f := func(name string, mutate func(*v1.Pod), want int) {
		t.Helper()
		if got := MessageBudget(unitPod(mutate)); got != want {
			t.Errorf("%s: %d, want %d", name, got, want)
		}
	}
	f("one container: its own limit binds first", nil, 12288)
	f("three share 12 KiB", withApps("a", "b", "c"), 4096)
	f("four", withApps("a", "b", "c", "d"), 3072)
	f("init containers count", func(p *v1.Pod) {
		withApps("a", "b")(p)
		p.Spec.InitContainers = []v1.Container{{Name: "i1"}, {Name: "i2"}, {Name: "i3"}}
	}, 2457)
	f("no containers", withApps(), 12288)
}

func TestFallsBackToLogs(t *testing.T) {
	f := func(name string, policy v1.TerminationMessagePolicy, code int32, reason string, want bool) {
		t.Helper()
		spec := &v1.Container{TerminationMessagePolicy: policy}
		if got := FallsBackToLogs(spec, code, reason); got != want {
			t.Errorf("%s: %v, want %v", name, got, want)
		}
	}
	f("File", v1.TerminationMessageReadFile, 1, "Error", false)
	f("FallbackToLogsOnError, failed", v1.TerminationMessageFallbackToLogsOnError, 1, "Error", true)
	f("FallbackToLogsOnError, OOM killed", v1.TerminationMessageFallbackToLogsOnError, 137, "OOMKilled", true)
	f("FallbackToLogsOnError, succeeded", v1.TerminationMessageFallbackToLogsOnError, 0, "Completed", false)
	f("FallbackToLogsOnError, never ran", v1.TerminationMessageFallbackToLogsOnError, 128, "ContainerCannotRun", false)
}

func TestTerminationPaths(t *testing.T) {
	node := &Node{RootDir: "/var/lib/podline", LogsDir: "/var/log/pods"}
	if got := TerminationLogPath(node, "uid-web", "app", 12); got != "/var/lib/podline/pods/uid-web/containers/app/termination-message-12" {
		t.Errorf("termination log %s", got)
	}
	if got := ContainerLogFile(node, unitPod(), "app", 3); got != "/var/log/pods/default_web_uid-web/app/3.log" {
		t.Errorf("container log %s", got)
	}
}
