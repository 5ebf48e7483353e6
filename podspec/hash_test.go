package podspec

import (
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func hashSpec() *v1.Container {
	return &v1.Container{
		Name: "app", Image: "busybox:1.36", Command: []string{"sleep"}, Args: []string{"3600"},
		Env:   []v1.EnvVar{{Name: "A", Value: "1"}, {Name: "B", Value: "2"}},
		Ports: []v1.ContainerPort{{ContainerPort: 80, Protocol: v1.ProtocolTCP}},
		Resources: v1.ResourceRequirements{Limits: v1.ResourceList{
			v1.ResourceCPU: resource.MustParse("500m"), v1.ResourceMemory: resource.MustParse("64Mi"),
		}},
		VolumeMounts: []v1.VolumeMount{{Name: "data", MountPath: "/data"}},
	}
}

// TestHashContainerGolden pins the hash of a few specs. The hash is stored
// on every running container: if it moves between podline versions, an
// upgrade restarts every container on the node. A change here needs a new
// hashPrefix and the old comparison kept (see hash_legacy.go).
func TestHashContainerGolden(t *testing.T) {
	f := func(name string, c *v1.Container, want string) {
		t.Helper()
		if got := HashContainer(c); got != want {
			t.Errorf("%s: hash %s, want %s", name, got, want)
		}
	}
	f("image only", &v1.Container{Name: "app", Image: "busybox:1.36"}, "v2:c707afc6704a80ea")
	f("another image", &v1.Container{Name: "app", Image: "busybox:1.37"}, "v2:7cdb37e570bcea89")
	f("no image", &v1.Container{Name: "app"}, "v2:f42af1b722660594")
	f("limits", hashSpec(), "v2:73c84d02c2c66367")
	f("requests and limits", &v1.Container{Name: "app", Image: "busybox:1.36",
		Resources: testResources("250m", "32Mi", "1", "1Gi")}, "v2:f4e45460ca89063c")
}

// TestHashContainerIgnores: fields that cannot change on a running pod do
// not move the hash, so an API upgrade that adds or defaults one restarts
// nothing.
func TestHashContainerIgnores(t *testing.T) {
	base := HashContainer(hashSpec())
	f := func(name string, mutate func(c *v1.Container)) {
		t.Helper()
		c := hashSpec()
		mutate(c)
		if h := HashContainer(c); h != base {
			t.Errorf("%s: hash %s, want %s", name, h, base)
		}
	}
	probe := &v1.Probe{ProbeHandler: v1.ProbeHandler{Exec: &v1.ExecAction{Command: []string{"true"}}}, PeriodSeconds: 10}
	f("name", func(c *v1.Container) { c.Name = "other" })
	f("liveness probe", func(c *v1.Container) { c.LivenessProbe = probe })
	f("readiness and startup probes", func(c *v1.Container) { c.ReadinessProbe, c.StartupProbe = probe, probe })
	f("terminationMessagePath", func(c *v1.Container) { c.TerminationMessagePath = "/dev/termination-log" })
	f("terminationMessagePolicy", func(c *v1.Container) { c.TerminationMessagePolicy = v1.TerminationMessageFallbackToLogsOnError })
	f("imagePullPolicy", func(c *v1.Container) { c.ImagePullPolicy = v1.PullIfNotPresent })
	f("lifecycle", func(c *v1.Container) {
		c.Lifecycle = &v1.Lifecycle{PreStop: &v1.LifecycleHandler{Sleep: &v1.SleepAction{Seconds: 5}}}
	})
	f("resizePolicy", func(c *v1.Container) {
		c.ResizePolicy = []v1.ContainerResizePolicy{{ResourceName: v1.ResourceCPU, RestartPolicy: v1.NotRequired}}
	})
	f("command, args, env", func(c *v1.Container) {
		c.Command, c.Args, c.Env = []string{"sh"}, []string{"-c", "true"}, nil
	})
	f("ports", func(c *v1.Container) { c.Ports[0].ContainerPort = 8080 })
	f("mounts", func(c *v1.Container) { c.VolumeMounts[0].ReadOnly = true })
	f("security context", func(c *v1.Container) { c.SecurityContext = &v1.SecurityContext{RunAsUser: ptrOf(int64(1))} })
	f("working dir, tty, stdin", func(c *v1.Container) { c.WorkingDir, c.TTY, c.Stdin = "/srv", true, true })
	f("other resources", func(c *v1.Container) {
		c.Resources.Limits[v1.ResourceEphemeralStorage] = resource.MustParse("1Gi")
		c.Resources.Claims = []v1.ResourceClaim{{Name: "gpu"}}
	})
	f("the same quantity written another way", func(c *v1.Container) {
		c.Resources.Limits[v1.ResourceCPU] = resource.MustParse("0.5")
		c.Resources.Limits[v1.ResourceMemory] = resource.MustParse("65536Ki")
	})
	f("resources inserted in another order", func(c *v1.Container) {
		c.Resources.Limits = v1.ResourceList{}
		c.Resources.Limits[v1.ResourceMemory] = resource.MustParse("64Mi")
		c.Resources.Limits[v1.ResourceCPU] = resource.MustParse("500m")
	})
}

// TestHashContainerSensitive: what can change on a running pod moves the
// hash, each change to a hash of its own.
func TestHashContainerSensitive(t *testing.T) {
	base := HashContainer(hashSpec())
	seen := map[string]string{base: "base"}
	f := func(name string, mutate func(c *v1.Container)) {
		t.Helper()
		c := hashSpec()
		mutate(c)
		h := HashContainer(c)
		if other, dup := seen[h]; dup {
			t.Errorf("%s: hash %s equals the hash of %s", name, h, other)
		}
		seen[h] = name
	}
	f("image", func(c *v1.Container) { c.Image = "busybox:1.37" })
	f("image digest", func(c *v1.Container) { c.Image = "busybox@sha256:" + strings.Repeat("a", 64) })
	f("cpu limit", func(c *v1.Container) { c.Resources.Limits[v1.ResourceCPU] = resource.MustParse("1") })
	f("memory limit", func(c *v1.Container) { c.Resources.Limits[v1.ResourceMemory] = resource.MustParse("128Mi") })
	f("cpu request", func(c *v1.Container) {
		c.Resources.Requests = v1.ResourceList{v1.ResourceCPU: resource.MustParse("100m")}
	})
	f("memory request", func(c *v1.Container) {
		c.Resources.Requests = v1.ResourceList{v1.ResourceMemory: resource.MustParse("32Mi")}
	})
	f("no limits", func(c *v1.Container) { c.Resources.Limits = nil })
}

// TestLegacyHashGolden pins the hash containers made before the versioned
// hash carry. If a k8s.io/api upgrade moves it, every such container
// would restart: compare them some other way before upgrading.
func TestLegacyHashGolden(t *testing.T) {
	if got, want := LegacyHashContainer(hashSpec()), "ccaf2e279fb8bd84"; got != want {
		t.Errorf("hash %s, want %s", got, want)
	}
}

func TestSpecChanged(t *testing.T) {
	f := func(name, hash string, spec *v1.Container, want bool) {
		t.Helper()
		if got := SpecChanged(hash, spec); got != want {
			t.Errorf("%s: SpecChanged(%q) = %v, want %v", name, hash, got, want)
		}
	}
	spec := hashSpec()
	newImage := hashSpec()
	newImage.Image = "busybox:1.37"
	probed := hashSpec()
	probed.LivenessProbe = &v1.Probe{ProbeHandler: v1.ProbeHandler{Exec: &v1.ExecAction{Command: []string{"true"}}}}
	resized := hashSpec()
	resized.Resources.Limits[v1.ResourceMemory] = resource.MustParse("128Mi")

	f("current hash, same spec", HashContainer(spec), spec, false)
	f("current hash, new image", HashContainer(spec), newImage, true)
	f("current hash, resized", HashContainer(spec), resized, true)
	f("current hash, a probe added", HashContainer(spec), probed, false)

	// Containers an earlier podline made: an upgrade restarts none that
	// match, and still replaces one whose spec changed.
	f("legacy hash, same spec", LegacyHashContainer(spec), spec, false)
	f("legacy hash as written then", "ccaf2e279fb8bd84", spec, false)
	f("legacy hash, new image", LegacyHashContainer(spec), newImage, true)
	f("legacy hash with few digits", "abc", spec, true)

	f("no hash", "", spec, false)
	f("a newer podline's hash", "v3:0123456789abcdef", spec, false)
	f("not a hash podline writes", "xyz", spec, false)
	f("too long to be legacy", "0123456789abcdef0", spec, false)
}
