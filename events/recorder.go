// Package events sends the events podline reports about pods and the node
// to the API server, through client-go's recorder: it aggregates repeats
// and rate-limits each object, so a crash-looping pod or a burst of starts
// cannot flood the API server. It decides nothing about what happened; the
// stages and the event plane say that.
package events

import (
	"context"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/record"
)

// Component is the event source's component name. It is the kubelet's, so
// that tools filtering node-agent events (kubectl describe's "From"
// column, alerting rules) keep working.
const Component = "kubelet"

// Recorder implements stages.Recorder and the node's events.
type Recorder struct {
	broadcaster record.EventBroadcaster
	rec         record.EventRecorder
	node        *v1.ObjectReference
}

// New starts a broadcaster that writes to the API server. Shutdown stops
// it.
func New(ctx context.Context, client kubernetes.Interface, nodeName string) *Recorder {
	b := record.NewBroadcaster(record.WithContext(ctx))
	b.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: client.CoreV1().Events("")})
	return newRecorder(b, nodeName)
}

func newRecorder(b record.EventBroadcaster, nodeName string) *Recorder {
	return &Recorder{
		broadcaster: b,
		rec:         b.NewRecorder(scheme.Scheme, v1.EventSource{Component: Component, Host: nodeName}),
		// The kubelet's node reference uses the node name as its UID: events
		// for the node are findable before (and without) the Node object.
		node: &v1.ObjectReference{Kind: "Node", Name: nodeName, UID: types.UID(nodeName)},
	}
}

// PodEvent records an event about a pod, or one of its containers when
// container is set.
func (r *Recorder) PodEvent(pod *v1.Pod, container, eventType, reason, message string) {
	ref := &v1.ObjectReference{
		Kind: "Pod", APIVersion: "v1", Namespace: pod.Namespace, Name: pod.Name,
		UID: pod.UID, ResourceVersion: pod.ResourceVersion,
	}
	if container != "" {
		ref.FieldPath = fieldPath(pod, container)
	}
	r.rec.Event(ref, eventType, reason, message)
}

// NodeEvent records an event about the node.
func (r *Recorder) NodeEvent(eventType, reason, message string) {
	r.rec.Event(r.node, eventType, reason, message)
}

// Shutdown stops the broadcaster; events not yet sent are dropped.
func (r *Recorder) Shutdown() { r.broadcaster.Shutdown() }

// fieldPath locates a container in the pod spec as events do.
func fieldPath(pod *v1.Pod, name string) string {
	for i := range pod.Spec.InitContainers {
		if pod.Spec.InitContainers[i].Name == name {
			return "spec.initContainers{" + name + "}"
		}
	}
	for i := range pod.Spec.EphemeralContainers {
		if pod.Spec.EphemeralContainers[i].Name == name {
			return "spec.ephemeralContainers{" + name + "}"
		}
	}
	return "spec.containers{" + name + "}"
}
