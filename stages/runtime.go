package stages

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podline/podline/cgroupfs"
)

// SandboxRuntime is what the sandbox stage needs of the CRI.
type SandboxRuntime interface {
	RunPodSandbox(ctx context.Context, cfg *runtimeapi.PodSandboxConfig, runtimeHandler string) (string, error)
	StopPodSandbox(ctx context.Context, id string) error
	RemovePodSandbox(ctx context.Context, id string) error
	PodSandboxStatus(ctx context.Context, id string) (*runtimeapi.PodSandboxStatus, error)
}

// ContainerRuntime is what the containers stage needs of the CRI.
type ContainerRuntime interface {
	CreateContainer(ctx context.Context, sandboxID string, cfg *runtimeapi.ContainerConfig, sandboxCfg *runtimeapi.PodSandboxConfig) (string, error)
	StartContainer(ctx context.Context, id string) error
	StopContainer(ctx context.Context, id string, grace time.Duration) error
	RemoveContainer(ctx context.Context, id string) error
	ContainerStatus(ctx context.Context, id string) (*runtimeapi.ContainerStatus, error)
	// ExecSync runs a lifecycle hook's command; without a timeout (0) it
	// runs as long as ctx lets it.
	ExecSync(ctx context.Context, id string, cmd []string, timeout time.Duration) (*runtimeapi.ExecSyncResponse, error)
}

// Watcher is told which containers and sandboxes podline started and
// removed, so the event plane can watch their cgroups. cgroupParent is the
// pod cgroup ("" when pods get none).
type Watcher interface {
	ContainerStarted(uid types.UID, sandboxID, containerID, cgroupParent string)
	ContainerRemoved(containerID string)
	SandboxStarted(uid types.UID, sandboxID, cgroupParent string)
	SandboxRemoved(sandboxID string)
}

// noWatcher is the Watcher when nothing watches: the relist alone.
type noWatcher struct{}

func (noWatcher) ContainerStarted(types.UID, string, string, string) {}
func (noWatcher) ContainerRemoved(string)                            {}
func (noWatcher) SandboxStarted(types.UID, string, string)           {}
func (noWatcher) SandboxRemoved(string)                              {}

func watcherOr(w Watcher) Watcher {
	if w == nil {
		return noWatcher{}
	}
	return w
}

// PodCgroupRemover removes a pod cgroup once its pod is gone.
type PodCgroupRemover interface {
	RemovePod(parent string) error
}

// PodCgroups makes pod cgroups with their limits.
type PodCgroups interface {
	EnsurePod(parent string, r cgroupfs.Resources) error
}

// ImageRuntime is what the containers stage needs of the CRI image service.
type ImageRuntime interface {
	PullImage(ctx context.Context, image string, auth *runtimeapi.AuthConfig, sandboxCfg *runtimeapi.PodSandboxConfig) (string, error)
	ImageStatus(ctx context.Context, image string) (*runtimeapi.Image, error)
}
