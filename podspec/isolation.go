package podspec

import (
	v1 "k8s.io/api/core/v1"
)

// CheckIsolation refuses a pod that asks for isolation podline does not
// give: a RuntimeClass (kata, gVisor: a sandbox of its own kernel) or a
// user namespace of its own (hostUsers: false). Running such a pod in the
// default runtime, in the host's user namespace, would let code its owner
// chose to contain reach the host as root; a node whose runtime lacks the
// handler or user namespaces refuses it the same way. The error wraps
// ErrConfig and names the field.
func CheckIsolation(pod *v1.Pod) error {
	if rc := pod.Spec.RuntimeClassName; rc != nil && *rc != "" {
		return configErrorf("spec.runtimeClassName %q: this node runs every pod in its default runtime handler and has no RuntimeClass support", *rc)
	}
	if hu := pod.Spec.HostUsers; hu != nil && !*hu {
		return configErrorf("spec.hostUsers: false: this node does not create user namespaces for pods")
	}
	return nil
}
