package stages

import (
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/podline/podline/internal/podtest"
	"github.com/podline/podline/pleg"
	"github.com/podline/podline/podspec"
)

// Builders shared by the unit tests of the pure decision functions: a
// desired pod, and the observed runtime state as *pleg.Pod values built
// directly (newest sandbox and container first, as the cache orders them).

// baseTime is the fixed clock the unit tests reason from.
var baseTime = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)

// unitPod is a pod "web" in "default" with one app container "app" and
// restart policy Always, changed by mutate (nil entries are skipped).
var unitPod = podtest.Pod

// withApps replaces the app containers with ones of these names.
var withApps = podtest.Apps

// withInits sets init containers of these names, in order.
func withInits(names ...string) func(*v1.Pod) {
	return func(p *v1.Pod) {
		p.Spec.InitContainers = nil
		for _, n := range names {
			p.Spec.InitContainers = append(p.Spec.InitContainers, v1.Container{Name: n, Image: "busybox:1.36"})
		}
	}
}

func withRestartPolicy(rp v1.RestartPolicy) func(*v1.Pod) {
	return func(p *v1.Pod) { p.Spec.RestartPolicy = rp }
}

// testResources builds requirements from quantities; "" leaves one unset.
var testResources = podtest.Resources

func ptrOf[T any](v T) *T { return podtest.Ptr(v) }

func rtPod(sbs []*pleg.Sandbox, cs ...*pleg.Container) *pleg.Pod {
	return &pleg.Pod{UID: "uid-web", Name: "web", Namespace: "default", Sandboxes: sbs, Containers: cs}
}

func sbList(sbs ...*pleg.Sandbox) []*pleg.Sandbox { return sbs }

func rtReady(id string, attempt uint32) *pleg.Sandbox {
	return &pleg.Sandbox{ID: id, Attempt: attempt, State: pleg.SandboxReady,
		CreatedAt: baseTime.Add(time.Duration(attempt) * time.Minute), IPs: []string{"10.88.0.5"}}
}

func rtDead(id string, attempt uint32) *pleg.Sandbox {
	sb := rtReady(id, attempt)
	sb.State = pleg.SandboxNotReady
	return sb
}

func rtCreated(id, sandboxID, name string, attempt uint32) *pleg.Container {
	return &pleg.Container{ID: id, SandboxID: sandboxID, Name: name, Attempt: attempt,
		State: pleg.ContainerCreated, CreatedAt: baseTime.Add(time.Duration(attempt) * time.Second)}
}

func rtRunning(id, sandboxID, name string, attempt uint32) *pleg.Container {
	c := rtCreated(id, sandboxID, name, attempt)
	c.State, c.StartedAt = pleg.ContainerRunning, c.CreatedAt.Add(time.Millisecond)
	c.ImageRef = "sha256:" + name
	return c
}

func rtExited(id, sandboxID, name string, attempt uint32, code int32, finished time.Time) *pleg.Container {
	c := rtRunning(id, sandboxID, name, attempt)
	c.State, c.ExitCode, c.FinishedAt, c.Detailed = pleg.ContainerExited, code, finished, true
	return c
}

// withHash stamps the hash of spec on c, as podline does at creation.
func withHash(c *pleg.Container, spec *v1.Container) *pleg.Container {
	c.Hash = podspec.HashContainer(spec)
	return c
}
