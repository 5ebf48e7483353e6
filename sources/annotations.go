package sources

// Annotation keys kubelet uses for pods that come from outside the API
// server. podline writes the same keys so mirror pods and tooling look alike.
const (
	// ConfigHashAnnotation holds a static pod's UID (the hash of its
	// manifest); on a mirror pod it ties the mirror to its static pod.
	ConfigHashAnnotation = "kubernetes.io/config.hash"
	// ConfigSourceAnnotation names the source a pod came from.
	ConfigSourceAnnotation = "kubernetes.io/config.source"
	// ConfigSeenAnnotation is when this process first saw the pod's UID.
	ConfigSeenAnnotation = "kubernetes.io/config.seen"
	// ConfigMirrorAnnotation marks a mirror pod in the API server.
	ConfigMirrorAnnotation = "kubernetes.io/config.mirror"
)

// isLocalAnnotation reports annotations that podline itself writes or that
// only describe where a pod was seen; a difference in them is not a change
// of the desired pod.
func isLocalAnnotation(key string) bool {
	switch key {
	case ConfigSeenAnnotation, ConfigSourceAnnotation, ConfigMirrorAnnotation:
		return true
	}
	return false
}
