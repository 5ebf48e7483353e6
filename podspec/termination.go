package podspec

import (
	"path/filepath"
	"strconv"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// The kubelet's limits on termination messages: what one container's
// file may give, what a pod's statuses may carry in all, and what is
// taken from the log instead under FallbackToLogsOnError.
const (
	MaxContainerMessage = 4 << 10
	MaxPodMessages      = 12 << 10
	MaxLogTailMessage   = 2 << 10
	MaxLogTailLines     = 80
)

// reasonCannotRun is the runtime's reason for a container that never
// started: it has no log to fall back to.
const reasonCannotRun = "ContainerCannotRun"

// MountsTerminationLog reports whether the container gets a termination
// log file. The sources default the path; a spec without one gets none.
func MountsTerminationLog(spec *v1.Container) bool {
	return spec.TerminationMessagePath != ""
}

// TerminationLogPath is the host file one container instance writes its
// termination message to, mounted at its terminationMessagePath. Each
// instance has its own, named by its attempt (which no two instances of a
// container share), so a restart starts from an empty file and the
// previous instance's message stays readable for its lastState.
func TerminationLogPath(node *Node, uid types.UID, name string, attempt uint32) string {
	return filepath.Join(node.PodDir(uid), "containers", name, "termination-message-"+strconv.FormatUint(uint64(attempt), 10))
}

// ContainerLogPath is the instance's CRI log, relative to the pod's log
// directory.
func ContainerLogPath(name string, attempt uint32) string {
	return filepath.Join(name, strconv.FormatUint(uint64(attempt), 10)+".log")
}

// ContainerLogFile is the instance's CRI log on the host.
func ContainerLogFile(node *Node, pod *v1.Pod, name string, attempt uint32) string {
	return filepath.Join(node.PodLogDir(pod.Namespace, pod.Name, pod.UID), ContainerLogPath(name, attempt))
}

// FallsBackToLogs reports whether an exit whose termination log is empty
// (or missing) takes its message from the tail of the container's log.
func FallsBackToLogs(spec *v1.Container, exitCode int32, reason string) bool {
	return spec.TerminationMessagePolicy == v1.TerminationMessageFallbackToLogsOnError &&
		exitCode != 0 && reason != reasonCannotRun
}

// MessageBudget is how many bytes of termination message each container
// status of the pod may carry: the pod's share split evenly over all its
// containers. A longer message keeps its start, as the kubelet's status
// manager cuts it (the file itself was read from its end).
func MessageBudget(pod *v1.Pod) int {
	n := len(pod.Spec.Containers) + len(pod.Spec.InitContainers) + len(pod.Spec.EphemeralContainers)
	if n == 0 {
		return MaxPodMessages
	}
	return MaxPodMessages / n
}
