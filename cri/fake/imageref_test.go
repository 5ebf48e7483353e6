package fake

import "testing"

func TestNormalizeRef(t *testing.T) {
	f := func(ref, want string) {
		t.Helper()
		if got := normalizeRef(ref); got != want {
			t.Fatalf("normalizeRef(%q) = %q, want %q", ref, got, want)
		}
	}
	f("busybox", "docker.io/library/busybox:latest")
	f("busybox:1.36", "docker.io/library/busybox:1.36")
	f("library/busybox:1.36", "docker.io/library/busybox:1.36")
	f("docker.io/library/busybox:1.36", "docker.io/library/busybox:1.36")
	f("docker.io/busybox:1.36", "docker.io/library/busybox:1.36")
	f("someone/app:v2", "docker.io/someone/app:v2")
	f("registry.k8s.io/pause:3.10", "registry.k8s.io/pause:3.10")
	f("registry.k8s.io/pause", "registry.k8s.io/pause:latest")
	f("localhost/app", "localhost/app:latest")
	f("localhost:5000/team/app:1", "localhost:5000/team/app:1")
	f("busybox@sha256:abcd", "docker.io/library/busybox@sha256:abcd")
	f("busybox:1.36@sha256:abcd", "docker.io/library/busybox:1.36@sha256:abcd")
	f("sha256:abcd", "sha256:abcd")
	f("", "")
}
