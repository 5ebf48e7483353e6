package sources

import (
	"maps"
	"reflect"

	v1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
)

// change classifies how next differs from old, the way kubelet's config
// merge does: a desired-state change is an UPDATE, or a DELETE once the pod
// carries a deletionTimestamp; a status-only change is a RECONCILE.
type change int

const (
	unchanged change = iota
	changedSpec
	changedDeletion
	changedStatus
)

func classify(old, next *v1.Pod) change {
	if desiredDiffers(old, next) {
		if next.DeletionTimestamp != nil {
			return changedDeletion
		}
		return changedSpec
	}
	if !equal(&old.Status, &next.Status) {
		return changedStatus
	}
	return unchanged
}

// equal is semantic equality (1000m CPU equals 1, nil equals empty) at the
// price of plain reflection for the common case of identical values:
// Semantic.DeepEqual alone costs tens of allocations per pod, which a
// 10,000-pod snapshot cannot afford, and reflect.DeepEqual alone would see
// a change where a quantity is only written differently.
func equal[T any](a, b *T) bool {
	return reflect.DeepEqual(a, b) || apiequality.Semantic.DeepEqual(a, b)
}

// desiredDiffers compares what the consumer acts on. Cheap map and pointer
// checks go first; the reflective spec comparison runs only when they agree.
func desiredDiffers(old, next *v1.Pod) bool {
	return !maps.Equal(old.Labels, next.Labels) ||
		!annotationsEqual(old.Annotations, next.Annotations) ||
		!old.DeletionTimestamp.Equal(next.DeletionTimestamp) ||
		!int64PtrEqual(old.DeletionGracePeriodSeconds, next.DeletionGracePeriodSeconds) ||
		!equal(&old.Spec, &next.Spec)
}

// annotationsEqual compares annotations without the local ones.
func annotationsEqual(a, b map[string]string) bool {
	n := 0
	for k, va := range a {
		if isLocalAnnotation(k) {
			continue
		}
		n++
		if vb, ok := b[k]; !ok || va != vb {
			return false
		}
	}
	for k := range b {
		if !isLocalAnnotation(k) {
			n--
		}
	}
	return n == 0
}

func int64PtrEqual(a, b *int64) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}
