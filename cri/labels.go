package cri

// Keys podline writes on every sandbox and container so that, after a
// restart, it can rebuild which pod and which container spec each runtime
// object belongs to. They are the names Kubernetes tools already know
// (crictl, log collectors), so they must not change.
const (
	LabelPodName       = "io.kubernetes.pod.name"
	LabelPodNamespace  = "io.kubernetes.pod.namespace"
	LabelPodUID        = "io.kubernetes.pod.uid"
	LabelContainerName = "io.kubernetes.container.name"

	// AnnotationContainerHash is the hash of the container spec a container
	// was created from; a changed spec means the container must be replaced.
	AnnotationContainerHash = "io.kubernetes.container.hash"
	// AnnotationRestartCount counts restarts of one container of a pod.
	AnnotationRestartCount = "io.kubernetes.container.restartCount"
	// AnnotationTerminationGrace is the pod's terminationGracePeriodSeconds.
	AnnotationTerminationGrace = "io.kubernetes.pod.terminationGracePeriod"
	// AnnotationInitContainer is "true" on init containers.
	AnnotationInitContainer = "podline.io/init-container"
	// AnnotationPodDeletionGrace is the grace period of a pod being deleted.
	AnnotationPodDeletionGrace = "io.kubernetes.pod.deletionGracePeriod"
)

// PodUIDOf returns the pod UID recorded in a sandbox's or container's labels,
// or "" when the object was not made by podline.
func PodUIDOf(labels map[string]string) string { return labels[LabelPodUID] }

// ContainerNameOf returns the pod-spec container name recorded in a
// container's labels, or "".
func ContainerNameOf(labels map[string]string) string { return labels[LabelContainerName] }
