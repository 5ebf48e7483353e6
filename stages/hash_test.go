package stages

import (
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

// TestHashContainerGolden pins the hash of one spec. The hash is stored on
// every running container: if it changes between podline versions, an
// upgrade restarts every container on the node.
func TestHashContainerGolden(t *testing.T) {
	if got, want := HashContainer(hashSpec()), "ccaf2e279fb8bd84"; got != want {
		t.Errorf("hash %s, want %s", got, want)
	}
}

func TestHashContainerStable(t *testing.T) {
	a := hashSpec()
	b := a.DeepCopy()
	// Same resources, inserted in the other order.
	b.Resources.Limits = v1.ResourceList{}
	b.Resources.Limits[v1.ResourceMemory] = resource.MustParse("64Mi")
	b.Resources.Limits[v1.ResourceCPU] = resource.MustParse("500m")
	first := HashContainer(a)
	for i := 0; i < 20; i++ {
		if h := HashContainer(b); h != first {
			t.Fatalf("hash of an equal spec %s, want %s", h, first)
		}
	}
	if HashContainer(a) != first {
		t.Fatal("hashing the same spec twice differs")
	}
}

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
	f("command", func(c *v1.Container) { c.Command = []string{"sleep", "1"} })
	f("args", func(c *v1.Container) { c.Args = []string{"3601"} })
	f("env value", func(c *v1.Container) { c.Env[1].Value = "3" })
	f("env order", func(c *v1.Container) { c.Env[0], c.Env[1] = c.Env[1], c.Env[0] })
	f("added env", func(c *v1.Container) { c.Env = append(c.Env, v1.EnvVar{Name: "C"}) })
	f("port", func(c *v1.Container) { c.Ports[0].ContainerPort = 8080 })
	f("memory limit", func(c *v1.Container) { c.Resources.Limits[v1.ResourceMemory] = resource.MustParse("128Mi") })
	f("mount", func(c *v1.Container) { c.VolumeMounts[0].ReadOnly = true })
	f("working dir", func(c *v1.Container) { c.WorkingDir = "/srv" })
	f("security context", func(c *v1.Container) { c.SecurityContext = &v1.SecurityContext{RunAsUser: ptrOf(int64(1))} })
	f("name", func(c *v1.Container) { c.Name = "app2" })
}
