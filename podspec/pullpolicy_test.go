package podspec

import (
	"testing"

	v1 "k8s.io/api/core/v1"
)

func TestDefaultPullPolicy(t *testing.T) {
	f := func(image string, want v1.PullPolicy) {
		t.Helper()
		if got := DefaultPullPolicy(image); got != want {
			t.Errorf("DefaultPullPolicy(%q) = %s, want %s", image, got, want)
		}
	}
	const digest = "@sha256:1ac0e3e8f8bbd2b1e2d2c6b5a1f7f9c0a9e8b3f7d5c4b2a1e0f9d8c7b6a5f4e3"
	f("busybox", v1.PullAlways)
	f("busybox:latest", v1.PullAlways)
	f("library/busybox", v1.PullAlways)
	f("docker.io/library/busybox", v1.PullAlways)
	f("busybox:1.36", v1.PullIfNotPresent)
	f("docker.io/library/busybox:1.36", v1.PullIfNotPresent)
	f("registry.local:5000/app", v1.PullAlways)
	f("registry.local:5000/team/app", v1.PullAlways)
	f("registry.local:5000/app:latest", v1.PullAlways)
	f("registry.local:5000/app:v2", v1.PullIfNotPresent)
	f("busybox"+digest, v1.PullIfNotPresent)
	// The API server defaults by the tag alone.
	f("busybox:latest"+digest, v1.PullAlways)
	f("busybox:1.36"+digest, v1.PullIfNotPresent)
	f("registry.local:5000/app"+digest, v1.PullIfNotPresent)
	f("127.0.0.1:5043/private/busybox:1.36", v1.PullIfNotPresent)
	f("localhost/app", v1.PullAlways)
	// Names that do not parse are not guessed at.
	f("Busybox", v1.PullIfNotPresent)
	f("busybox:", v1.PullIfNotPresent)
}
