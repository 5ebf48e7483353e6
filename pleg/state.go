package pleg

import (
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// SandboxState is a sandbox's state as the runtime last reported it.
type SandboxState uint8

const (
	SandboxReady SandboxState = iota + 1
	SandboxNotReady
)

func (s SandboxState) String() string {
	switch s {
	case SandboxReady:
		return "ready"
	case SandboxNotReady:
		return "notready"
	}
	return "unknown"
}

// ContainerState is a container's state as the runtime last reported it.
// The values are ordered: a container instance only moves forward
// (created → running → exited), which is what lets observations that arrive
// out of order be merged safely (see Container.newerThan).
type ContainerState uint8

const (
	ContainerUnknown ContainerState = iota
	ContainerCreated
	ContainerRunning
	ContainerExited
)

func (s ContainerState) String() string {
	switch s {
	case ContainerCreated:
		return "created"
	case ContainerRunning:
		return "running"
	case ContainerExited:
		return "exited"
	}
	return "unknown"
}

// Sandbox is one pod sandbox instance.
type Sandbox struct {
	ID        string
	Attempt   uint32
	State     SandboxState
	CreatedAt time.Time
	// IPs are the pod IPs, primary first; empty for host-network sandboxes.
	IPs []string
}

// Container is one container instance. Its restart count is its Attempt.
type Container struct {
	ID        string
	SandboxID string
	Name      string
	Attempt   uint32
	State     ContainerState
	// Hash is the spec hash podline stored on the container when it created
	// it; a different hash in the desired spec means restart.
	Hash string
	// Grace is the pod's grace period in seconds that podline recorded on
	// the container when it created it (cri.AnnotationTerminationGrace),
	// so that a container whose pod no source knows any more still stops
	// within its own grace; nil when none was recorded.
	Grace      *int64
	Init       bool
	Image      string
	ImageRef   string
	CreatedAt  time.Time
	StartedAt  time.Time
	FinishedAt time.Time
	ExitCode   int32
	Reason     string
	Message    string
	// Detailed is false when only a list entry was seen (no exit code or
	// start time yet); an inspection fills it in.
	Detailed bool
}

// newerThan reports whether c carries information that old lacks. Both must
// describe the same container ID.
func (c *Container) newerThan(old *Container) bool {
	if c.State != old.State {
		return c.State > old.State || old.State == ContainerUnknown
	}
	return c.Detailed && !old.Detailed
}

// Pod is everything the runtime holds for one pod UID, as last observed.
// A Pod value is immutable once published in a Cache: writers copy it.
type Pod struct {
	UID       types.UID
	Name      string
	Namespace string
	// Sandboxes are ordered newest first: by attempt, then creation time.
	Sandboxes []*Sandbox
	// Containers are ordered newest first: by attempt, then creation time
	// (see newestFirst).
	Containers []*Container
}

// CurrentSandbox returns the newest sandbox, or nil.
func (p *Pod) CurrentSandbox() *Sandbox {
	if p == nil || len(p.Sandboxes) == 0 {
		return nil
	}
	return p.Sandboxes[0]
}

// Container returns the container instance with this ID, or nil.
func (p *Pod) Container(id string) *Container {
	if p == nil {
		return nil
	}
	for _, c := range p.Containers {
		if c.ID == id {
			return c
		}
	}
	return nil
}

// Sandbox returns the sandbox with this ID, or nil.
func (p *Pod) Sandbox(id string) *Sandbox {
	if p == nil {
		return nil
	}
	for _, sb := range p.Sandboxes {
		if sb.ID == id {
			return sb
		}
	}
	return nil
}

// Latest returns the newest instance of the named container in any sandbox.
func (p *Pod) Latest(name string) *Container {
	if p == nil {
		return nil
	}
	for _, c := range p.Containers {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// LatestIn returns the newest instance of the named container in one sandbox.
func (p *Pod) LatestIn(sandboxID, name string) *Container {
	if p == nil {
		return nil
	}
	for _, c := range p.Containers {
		if c.Name == name && c.SandboxID == sandboxID {
			return c
		}
	}
	return nil
}

// Previous returns the instance of the named container that ran before cur,
// or nil.
func (p *Pod) Previous(cur *Container) *Container {
	if p == nil || cur == nil {
		return nil
	}
	seen := false
	for _, c := range p.Containers {
		if c.Name != cur.Name {
			continue
		}
		if seen {
			return c
		}
		seen = c.ID == cur.ID
	}
	return nil
}

// Running reports whether any container of the pod is running.
func (p *Pod) Running() bool {
	if p == nil {
		return false
	}
	for _, c := range p.Containers {
		if c.State == ContainerRunning {
			return true
		}
	}
	return false
}

// Empty reports whether the runtime holds nothing for the pod.
func (p *Pod) Empty() bool {
	return p == nil || (len(p.Sandboxes) == 0 && len(p.Containers) == 0)
}
