package stages

import (
	"runtime"
	"slices"
	"strconv"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// osRejection refuses a pod meant for another operating system, by its
// kubernetes.io/os label or its spec.os, with the kubelet's reasons. The
// kubelet compares the label with its own OS whatever the node's label
// says, so the node's labels do not enter.
func osRejection(pod *v1.Pod) *Rejection {
	if os, ok := pod.Labels[v1.LabelOSStable]; ok && os != runtime.GOOS {
		return &Rejection{Reason: "PodOSSelectorNodeLabelDoesNotMatch",
			Message: "Failed to admit pod as the `kubernetes.io/os` label doesn't match node label"}
	}
	if pod.Spec.OS != nil && string(pod.Spec.OS.Name) != runtime.GOOS {
		return &Rejection{Reason: "PodOSNotSupported", Message: "Failed to admit pod as the OS field doesn't match node OS"}
	}
	return nil
}

// matchesNodeAffinity reports whether the node (its name and labels)
// satisfies the pod's nodeSelector and its required node affinity.
// Preferred terms only rank nodes for the scheduler; they never refuse.
func matchesNodeAffinity(pod *v1.Pod, nodeName string, labels map[string]string) bool {
	for k, v := range pod.Spec.NodeSelector {
		if got, ok := labels[k]; !ok || got != v {
			return false
		}
	}
	a := pod.Spec.Affinity
	if a == nil || a.NodeAffinity == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return true
	}
	return matchesNodeSelector(a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution, nodeName, labels)
}

// matchesNodeSelector ORs the terms. A term with neither expressions nor
// fields is left out, so a selector of only such terms (or none) matches
// no node; a term that is malformed (an unknown operator, the wrong number
// of values, a bad key or value) matches none either.
func matchesNodeSelector(sel *v1.NodeSelector, nodeName string, labels map[string]string) bool {
	for i := range sel.NodeSelectorTerms {
		t := &sel.NodeSelectorTerms[i]
		if len(t.MatchExpressions) == 0 && len(t.MatchFields) == 0 {
			continue
		}
		if matchesTerm(t, nodeName, labels) {
			return true
		}
	}
	return false
}

// matchesTerm ANDs a term's label expressions and field expressions. Every
// requirement is checked for form first, as the scheduler parses a whole
// term before it matches any part of it.
func matchesTerm(t *v1.NodeSelectorTerm, nodeName string, labels map[string]string) bool {
	for i := range t.MatchExpressions {
		if !wellFormedLabelRequirement(&t.MatchExpressions[i]) {
			return false
		}
	}
	for i := range t.MatchFields {
		if r := &t.MatchFields[i]; (r.Operator != v1.NodeSelectorOpIn && r.Operator != v1.NodeSelectorOpNotIn) || len(r.Values) != 1 {
			return false
		}
	}
	for i := range t.MatchExpressions {
		r := &t.MatchExpressions[i]
		v, has := labels[r.Key]
		if !matchesRequirement(r, v, has) {
			return false
		}
	}
	for i := range t.MatchFields {
		// metadata.name is the one node field there is; another key reads
		// as empty.
		r := &t.MatchFields[i]
		v := ""
		if r.Key == "metadata.name" {
			v = nodeName
		}
		if !matchesRequirement(r, v, true) {
			return false
		}
	}
	return true
}

func matchesRequirement(r *v1.NodeSelectorRequirement, value string, has bool) bool {
	switch r.Operator {
	case v1.NodeSelectorOpIn:
		return has && slices.Contains(r.Values, value)
	case v1.NodeSelectorOpNotIn:
		return !has || !slices.Contains(r.Values, value)
	case v1.NodeSelectorOpExists:
		return has
	case v1.NodeSelectorOpDoesNotExist:
		return !has
	case v1.NodeSelectorOpGt, v1.NodeSelectorOpLt:
		if !has {
			return false
		}
		got, err := strconv.ParseInt(value, 10, 64)
		if err != nil {
			return false
		}
		bound, _ := strconv.ParseInt(r.Values[0], 10, 64)
		if r.Operator == v1.NodeSelectorOpGt {
			return got > bound
		}
		return got < bound
	}
	return false
}

// wellFormedLabelRequirement checks a label expression as a label selector
// requirement is checked: a qualified key; values for In and NotIn, none
// for Exists and DoesNotExist, one integer for Gt and Lt; valid label
// values.
func wellFormedLabelRequirement(r *v1.NodeSelectorRequirement) bool {
	if len(validation.IsQualifiedName(r.Key)) > 0 {
		return false
	}
	switch r.Operator {
	case v1.NodeSelectorOpIn, v1.NodeSelectorOpNotIn:
		if len(r.Values) == 0 {
			return false
		}
	case v1.NodeSelectorOpExists, v1.NodeSelectorOpDoesNotExist:
		if len(r.Values) != 0 {
			return false
		}
	case v1.NodeSelectorOpGt, v1.NodeSelectorOpLt:
		if len(r.Values) != 1 {
			return false
		}
		if _, err := strconv.ParseInt(r.Values[0], 10, 64); err != nil {
			return false
		}
	default:
		return false
	}
	for _, v := range r.Values {
		if len(validation.IsValidLabelValue(v)) > 0 {
			return false
		}
	}
	return true
}
