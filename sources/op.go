package sources

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
)

// Source names. They match the values kubelet writes into the
// kubernetes.io/config.source annotation, so tools that read the annotation
// keep working.
const (
	FileSource = "file"
	HTTPSource = "http"
	APISource  = "api"
)

// Op says what happened to the pods of an Update.
type Op int

const (
	// ADD: the pods are new to their source.
	ADD Op = iota
	// UPDATE: spec, labels, non-local annotations or deletion fields changed.
	UPDATE
	// DELETE: the pods changed and carry a deletionTimestamp: stop them
	// gracefully.
	DELETE
	// REMOVE: the pods are gone from their source.
	REMOVE
	// RECONCILE: only the status changed. (A change of other metadata, such
	// as resourceVersion, alone is not reported at all.)
	RECONCILE
)

func (o Op) String() string {
	switch o {
	case ADD:
		return "ADD"
	case UPDATE:
		return "UPDATE"
	case DELETE:
		return "DELETE"
	case REMOVE:
		return "REMOVE"
	case RECONCILE:
		return "RECONCILE"
	}
	return fmt.Sprintf("Op(%d)", int(o))
}

// Update is one kind of change from one source. The pods belong to the
// receiver: the Merger keeps no reference to them.
type Update struct {
	Op     Op
	Source string
	Pods   []*v1.Pod
}
