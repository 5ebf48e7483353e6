package stages

import (
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podline/podline/pleg"
)

// Builders shared by the unit tests of the pure decision functions: a
// desired pod, and the observed runtime state as *pleg.Pod values built
// directly (newest sandbox and container first, as the cache orders them).

// baseTime is the fixed clock the unit tests reason from.
var baseTime = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)

// unitPod is a pod "web" in "default" with one app container "app" and
// restart policy Always, changed by mutate (nil entries are skipped).
func unitPod(mutate ...func(*v1.Pod)) *v1.Pod {
	p := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: types.UID("uid-web")},
		Spec: v1.PodSpec{
			RestartPolicy: v1.RestartPolicyAlways,
			Containers:    []v1.Container{{Name: "app", Image: "busybox:1.36"}},
		},
	}
	for _, m := range mutate {
		if m != nil {
			m(p)
		}
	}
	return p
}

// withApps replaces the app containers with ones of these names.
func withApps(names ...string) func(*v1.Pod) {
	return func(p *v1.Pod) {
		p.Spec.Containers = nil
		for _, n := range names {
			p.Spec.Containers = append(p.Spec.Containers, v1.Container{Name: n, Image: "busybox:1.36"})
		}
	}
}

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
func testResources(cpuReq, memReq, cpuLim, memLim string) v1.ResourceRequirements {
	var r v1.ResourceRequirements
	set := func(rl *v1.ResourceList, name v1.ResourceName, q string) {
		if q == "" {
			return
		}
		if *rl == nil {
			*rl = v1.ResourceList{}
		}
		(*rl)[name] = resource.MustParse(q)
	}
	set(&r.Requests, v1.ResourceCPU, cpuReq)
	set(&r.Requests, v1.ResourceMemory, memReq)
	set(&r.Limits, v1.ResourceCPU, cpuLim)
	set(&r.Limits, v1.ResourceMemory, memLim)
	return r
}

func ptrOf[T any](v T) *T { return &v }

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
	c.Hash = HashContainer(spec)
	return c
}
