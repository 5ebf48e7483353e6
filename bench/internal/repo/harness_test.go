package repo

import "testing"

func TestHarnessPathsFollowPodlineRun(t *testing.T) {
	t.Setenv("PODLINE_RUN", "")
	if got := HarnessSocket(); got != "/run/podline-dev/containerd.sock" {
		t.Errorf("default socket %q", got)
	}
	t.Setenv("PODLINE_RUN", "/run/elsewhere")
	if got, want := HarnessPidFile(), "/run/elsewhere/containerd.pid"; got != want {
		t.Errorf("pid file %q, want %q", got, want)
	}
	if got, want := HarnessSocket(), "/run/elsewhere/containerd.sock"; got != want {
		t.Errorf("socket %q, want %q", got, want)
	}
}
