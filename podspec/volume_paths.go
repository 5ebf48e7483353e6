package podspec

import (
	"path/filepath"

	v1 "k8s.io/api/core/v1"
)

// VolumeHostPath returns where a volume lives on the host. ok is false for
// volume types podline does not handle yet.
func VolumeHostPath(node *Node, pod *v1.Pod, vol *v1.Volume) (string, bool) {
	plugin := ""
	switch {
	case vol.HostPath != nil:
		return vol.HostPath.Path, true
	case vol.EmptyDir != nil:
		plugin = "kubernetes.io~empty-dir"
	case vol.ConfigMap != nil:
		plugin = "kubernetes.io~configmap"
	case vol.Secret != nil:
		plugin = "kubernetes.io~secret"
	case vol.Projected != nil:
		plugin = "kubernetes.io~projected"
	case vol.DownwardAPI != nil:
		plugin = "kubernetes.io~downward-api"
	default:
		return "", false
	}
	return filepath.Join(node.PodDir(pod.UID), "volumes", plugin, vol.Name), true
}

// IsContentVolume reports the volume types whose files a ContentSource
// writes.
func IsContentVolume(vol *v1.Volume) bool {
	return vol.ConfigMap != nil || vol.Secret != nil || vol.Projected != nil || vol.DownwardAPI != nil
}
