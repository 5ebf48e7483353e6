package stages

import v1 "k8s.io/api/core/v1"

// Recorder receives the events the kubelet reports about pods (Pulling,
// Created, Killing, FailedMount, ...). container is empty for pod-level
// events; otherwise it names the container the event is about. A nil
// Recorder records nothing: the stages never depend on anyone listening.
type Recorder interface {
	PodEvent(pod *v1.Pod, container, eventType, reason, message string)
}

// recorderOr returns r, or one that drops everything.
func recorderOr(r Recorder) Recorder {
	if r == nil {
		return noRecorder{}
	}
	return r
}

type noRecorder struct{}

func (noRecorder) PodEvent(*v1.Pod, string, string, string, string) {}

// kubeletPodName names a pod as the kubelet's messages and events do:
// name_namespace(uid).
func kubeletPodName(pod *v1.Pod) string {
	if pod == nil {
		return ""
	}
	return pod.Name + "_" + pod.Namespace + "(" + string(pod.UID) + ")"
}
