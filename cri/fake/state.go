package fake

import (
	"crypto/rand"
	"encoding/hex"
	"hash/fnv"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// sandbox and container are the runtime's records. They are guarded by
// Server.mu. Label and annotation maps are the request's own (decoded for
// this call alone) and never modified afterwards, so responses share them.
type sandbox struct {
	id             string
	name           string
	namespace      string
	uid            string
	attempt        uint32
	labels         map[string]string
	annotations    map[string]string
	runtimeHandler string
	logDir         string
	netMode        runtimeapi.NamespaceMode
	pidMode        runtimeapi.NamespaceMode
	ipcMode        runtimeapi.NamespaceMode
	nameKey        string

	state     runtimeapi.PodSandboxState
	createdAt int64
	ip        string
	ipHost    uint16 // 0: no address from the pool
	// containers indexes this sandbox's containers so that lists filtered
	// by sandbox and sandbox teardown do not scan every container.
	containers map[string]*container
}

type container struct {
	id          string
	sandboxID   string
	name        string
	attempt     uint32
	image       string
	imageRef    string
	labels      map[string]string
	annotations map[string]string
	logPath     string
	nameKey     string

	exitAfter    time.Duration // < 0: never exits by itself
	exitCode     int32         // code of the self-exit
	stopExitCode int32         // code StopContainer leaves

	state      runtimeapi.ContainerState
	createdAt  int64
	startedAt  int64
	finishedAt int64
	exited     int32 // exit code once EXITED
	reason     string
	timer      *time.Timer // pending self-exit, nil when none

	// Usage for stats, fixed per container so numbers stay believable.
	cpuMilli uint64
	memBytes uint64
}

func (c *container) stopTimer() {
	if c.timer != nil {
		c.timer.Stop()
		c.timer = nil
	}
}

// newID returns a 64-hex-digit id, as containerd's look.
func newID() string {
	var b [32]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func hashOf(s string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(s))
	return h.Sum64()
}

func (sb *sandbox) status() *runtimeapi.PodSandboxStatus {
	return &runtimeapi.PodSandboxStatus{
		Id:        sb.id,
		Metadata:  sb.metadata(),
		State:     sb.state,
		CreatedAt: sb.createdAt,
		Network:   &runtimeapi.PodSandboxNetworkStatus{Ip: sb.ip},
		Linux: &runtimeapi.LinuxPodSandboxStatus{Namespaces: &runtimeapi.Namespace{
			Options: &runtimeapi.NamespaceOption{Network: sb.netMode, Pid: sb.pidMode, Ipc: sb.ipcMode},
		}},
		Labels:         sb.labels,
		Annotations:    sb.annotations,
		RuntimeHandler: sb.runtimeHandler,
	}
}

func (sb *sandbox) item() *runtimeapi.PodSandbox {
	return &runtimeapi.PodSandbox{
		Id:             sb.id,
		Metadata:       sb.metadata(),
		State:          sb.state,
		CreatedAt:      sb.createdAt,
		Labels:         sb.labels,
		Annotations:    sb.annotations,
		RuntimeHandler: sb.runtimeHandler,
	}
}

func (sb *sandbox) metadata() *runtimeapi.PodSandboxMetadata {
	return &runtimeapi.PodSandboxMetadata{Name: sb.name, Uid: sb.uid, Namespace: sb.namespace, Attempt: sb.attempt}
}

// containerStatuses returns the status of every container of sb, as
// containerd attaches them to each event and sandbox status.
func (sb *sandbox) containerStatuses() []*runtimeapi.ContainerStatus {
	out := make([]*runtimeapi.ContainerStatus, 0, len(sb.containers))
	for _, c := range sb.containers {
		out = append(out, c.status())
	}
	return out
}

func (c *container) status() *runtimeapi.ContainerStatus {
	return &runtimeapi.ContainerStatus{
		Id:          c.id,
		Metadata:    c.metadata(),
		State:       c.state,
		CreatedAt:   c.createdAt,
		StartedAt:   c.startedAt,
		FinishedAt:  c.finishedAt,
		ExitCode:    c.exited,
		Image:       &runtimeapi.ImageSpec{Image: c.image},
		ImageRef:    c.imageRef,
		ImageId:     c.imageRef,
		Reason:      c.reason,
		Labels:      c.labels,
		Annotations: c.annotations,
		LogPath:     c.logPath,
	}
}

func (c *container) item() *runtimeapi.Container {
	return &runtimeapi.Container{
		Id:           c.id,
		PodSandboxId: c.sandboxID,
		Metadata:     c.metadata(),
		Image:        &runtimeapi.ImageSpec{Image: c.image},
		ImageRef:     c.imageRef,
		ImageId:      c.imageRef,
		State:        c.state,
		CreatedAt:    c.createdAt,
		Labels:       c.labels,
		Annotations:  c.annotations,
	}
}

func (c *container) metadata() *runtimeapi.ContainerMetadata {
	return &runtimeapi.ContainerMetadata{Name: c.name, Attempt: c.attempt}
}

// matchLabels reports whether labels carry every key/value of sel.
func matchLabels(sel, labels map[string]string) bool {
	for k, v := range sel {
		if lv, ok := labels[k]; !ok || lv != v {
			return false
		}
	}
	return true
}
