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
	ipHost    uint16                 // 0: no address from the pool
	listed    *runtimeapi.PodSandbox // item() built for the current state; nil after a change
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
	userImage   string                              // the image as the pod spec named it
	resources   *runtimeapi.LinuxContainerResources // as created or last updated; never modified

	exitAfter    time.Duration // < 0: never exits by itself
	exitCode     int32         // code of the self-exit
	stopExitCode int32         // code StopContainer leaves

	state      runtimeapi.ContainerState
	createdAt  int64
	startedAt  int64
	finishedAt int64
	exited     int32 // exit code once EXITED
	reason     string
	timer      *time.Timer           // pending self-exit, nil when none
	listed     *runtimeapi.Container // item() built for the current state; nil after a change

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

// Lists are the hottest calls (a relist every second reads every record),
// so each record keeps the list item it last built and rebuilds it only
// after its state changed. Responses share these items: they are never
// modified once built, and gRPC only reads them while marshalling.

func (sb *sandbox) setState(st runtimeapi.PodSandboxState) {
	sb.state, sb.listed = st, nil
}

func (c *container) setState(st runtimeapi.ContainerState) {
	c.state, c.listed = st, nil
}

func (sb *sandbox) item() *runtimeapi.PodSandbox {
	if sb.listed == nil {
		sb.listed = sb.buildItem()
	}
	return sb.listed
}

func (c *container) item() *runtimeapi.Container {
	if c.listed == nil {
		c.listed = c.buildItem()
	}
	return c.listed
}

func (sb *sandbox) buildItem() *runtimeapi.PodSandbox {
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
		Image:       c.imageSpec(),
		ImageRef:    c.imageRef,
		ImageId:     c.imageRef,
		Reason:      c.reason,
		Labels:      c.labels,
		Annotations: c.annotations,
		LogPath:     c.logPath,
		Resources:   c.resourcesStatus(),
	}
}

func (c *container) imageSpec() *runtimeapi.ImageSpec {
	return &runtimeapi.ImageSpec{Image: c.image, UserSpecifiedImage: c.userImage}
}

// resourcesStatus reports the resources the container was given, as
// containerd reads them back from the container's spec.
func (c *container) resourcesStatus() *runtimeapi.ContainerResources {
	if c.resources == nil {
		return nil
	}
	return &runtimeapi.ContainerResources{Linux: c.resources}
}

func (c *container) buildItem() *runtimeapi.Container {
	return &runtimeapi.Container{
		Id:           c.id,
		PodSandboxId: c.sandboxID,
		Metadata:     c.metadata(),
		Image:        c.imageSpec(),
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
