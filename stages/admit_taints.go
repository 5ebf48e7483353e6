package stages

import v1 "k8s.io/api/core/v1"

// podSourceAnnotation names where a pod came from ("file", "http", "api"),
// as the sources write it (sources.ConfigSourceAnnotation; stages does not
// import sources).
const podSourceAnnotation = "kubernetes.io/config.source"

// untoleratedTaint returns the first node taint that bars the pod, if
// any. Only NoExecute taints bar a pod at admission, as in the kubelet:
// NoSchedule taints are the scheduler's to honour, and a pod bound to the
// node despite one (a DaemonSet's, or one given spec.nodeName directly)
// runs. A static pod is never barred: the node's own manifests are how it
// bootstraps what would lift the taint.
func untoleratedTaint(pod *v1.Pod, taints []v1.Taint) (v1.Taint, bool) {
	if isStatic(pod) {
		return v1.Taint{}, false
	}
	for _, t := range taints {
		if t.Effect == v1.TaintEffectNoExecute && !tolerated(pod.Spec.Tolerations, &t) {
			return t, true
		}
	}
	return v1.Taint{}, false
}

// isStatic reports whether the pod came from a source other than the API
// server.
func isStatic(pod *v1.Pod) bool {
	src, ok := pod.Annotations[podSourceAnnotation]
	return ok && src != "api"
}

func tolerated(tolerations []v1.Toleration, taint *v1.Taint) bool {
	for i := range tolerations {
		if tolerates(&tolerations[i], taint) {
			return true
		}
	}
	return false
}

// tolerates matches one toleration against a taint: an empty effect or
// key matches any, Exists any value, Equal (or no operator) the same
// value. Lt and Gt match nothing: comparing numbers is an alpha feature
// the kubelet has off by default.
func tolerates(tol *v1.Toleration, taint *v1.Taint) bool {
	if tol.Effect != "" && tol.Effect != taint.Effect {
		return false
	}
	if tol.Key != "" && tol.Key != taint.Key {
		return false
	}
	switch tol.Operator {
	case "", v1.TolerationOpEqual:
		return tol.Value == taint.Value
	case v1.TolerationOpExists:
		return true
	}
	return false
}
