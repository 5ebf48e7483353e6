package podstatus

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
)

// ownedConditions are the pod condition types the node agent owns; every
// other condition in the API object (readiness gates, DisruptionTarget,
// conditions written by controllers) belongs to someone else and is kept.
var ownedConditions = map[v1.PodConditionType]bool{
	v1.PodScheduled:              true,
	v1.PodReady:                  true,
	v1.PodInitialized:            true,
	v1.ContainersReady:           true,
	v1.PodReadyToStartContainers: true,
	v1.PodResizePending:          true,
	v1.PodResizeInProgress:       true,
}

// merged is the status to write and whether readiness gates held the
// Ready condition back.
type merged struct {
	status v1.PodStatus
	gated  bool
}

// mergeStatus combines the status computed on the node (ours, which it
// may modify) with the fields of the API object's status (api) that others
// own, so a patch never undoes another writer's work. now stamps a Ready
// condition that readiness gates turn false.
func mergeStatus(pod *v1.Pod, api *v1.PodStatus, ours v1.PodStatus, now time.Time) merged {
	out := ours
	conds := make([]v1.PodCondition, 0, len(api.Conditions)+len(ours.Conditions))
	for _, c := range api.Conditions {
		if !ownedConditions[c.Type] && findCondition(ours.Conditions, c.Type) == nil {
			conds = append(conds, c)
		}
	}
	out.Conditions = append(conds, ours.Conditions...)
	// Written by the scheduler and the resource claim controller.
	out.NominatedNodeName = api.NominatedNodeName
	out.ResourceClaimStatuses = api.ResourceClaimStatuses
	out.ExtendedResourceClaimStatus = api.ExtendedResourceClaimStatus
	gated := applyReadinessGates(pod, &out, api, now)
	return merged{status: out, gated: gated}
}

// applyReadinessGates turns a true Ready condition false while one of the
// pod's readiness gates is not a true condition, and reports whether it
// did. The gate conditions are written by others into the API object, so
// this is decided here, where the API object's status is known.
func applyReadinessGates(pod *v1.Pod, st *v1.PodStatus, api *v1.PodStatus, now time.Time) bool {
	if len(pod.Spec.ReadinessGates) == 0 {
		return false
	}
	ready := findCondition(st.Conditions, v1.PodReady)
	if ready == nil || ready.Status != v1.ConditionTrue {
		return false
	}
	var unmet []string
	for _, g := range pod.Spec.ReadinessGates {
		c := findCondition(st.Conditions, g.ConditionType)
		switch {
		case c == nil:
			unmet = append(unmet, fmt.Sprintf("corresponding condition of pod readiness gate %q does not exist.", g.ConditionType))
		case c.Status != v1.ConditionTrue:
			unmet = append(unmet, fmt.Sprintf("the status of pod readiness gate %q is not \"True\", but %v", g.ConditionType, c.Status))
		}
	}
	if len(unmet) == 0 {
		return false
	}
	ready.Status = v1.ConditionFalse
	ready.Reason = "ReadinessGatesNotReady"
	ready.Message = strings.Join(unmet, ", ")
	// Keep the transition time the API object has for a Ready that was
	// already false, so an unchanged gate produces an unchanged status.
	ready.LastTransitionTime = metav1.NewTime(now)
	if prev := findCondition(api.Conditions, v1.PodReady); prev != nil && prev.Status == v1.ConditionFalse {
		ready.LastTransitionTime = prev.LastTransitionTime
	}
	return true
}

func findCondition(conds []v1.PodCondition, t v1.PodConditionType) *v1.PodCondition {
	for i := range conds {
		if conds[i].Type == t {
			return &conds[i]
		}
	}
	return nil
}

// statusPatch builds the strategic merge patch that turns the API object's
// status (api) into next, with the object's UID as a precondition: the API
// server rejects a patch whose metadata.uid differs from the object's, so a
// status never lands on another pod that took the same name. A non-empty
// resourceVersion is a precondition too: the API server answers a conflict
// unless the object is still at that version, so a patch computed against
// a copy of the object (the watch's) lands only on exactly that object.
// It returns nil when there is nothing to change. Comparing the JSON forms
// is what makes "unchanged" exact: times travel with second precision, so
// a status computed in nanoseconds equals the one the API server stored
// from it.
func statusPatch(uid types.UID, resourceVersion string, api, next *v1.PodStatus) ([]byte, error) {
	oldJSON, err := json.Marshal(v1.Pod{Status: *api})
	if err != nil {
		return nil, fmt.Errorf("encode API status: %w", err)
	}
	newJSON, err := json.Marshal(v1.Pod{Status: *next})
	if err != nil {
		return nil, fmt.Errorf("encode status: %w", err)
	}
	diff, err := strategicpatch.CreateTwoWayMergePatch(oldJSON, newJSON, v1.Pod{})
	if err != nil {
		return nil, fmt.Errorf("status patch: %w", err)
	}
	if string(diff) == "{}" {
		return nil, nil
	}
	if len(diff) < 2 || diff[0] != '{' {
		panic(fmt.Sprintf("BUG: strategic merge patch is not a JSON object: %s", diff))
	}
	// Both sides carry empty metadata, so the diff has no metadata key of
	// its own: prepend the preconditions.
	id, err := json.Marshal(string(uid))
	if err != nil {
		return nil, fmt.Errorf("encode uid: %w", err)
	}
	var rv []byte
	if resourceVersion != "" {
		if rv, err = json.Marshal(resourceVersion); err != nil {
			return nil, fmt.Errorf("encode resourceVersion: %w", err)
		}
	}
	out := make([]byte, 0, len(diff)+len(id)+len(rv)+48)
	out = append(out, `{"metadata":{"uid":`...)
	out = append(out, id...)
	if rv != nil {
		out = append(out, `,"resourceVersion":`...)
		out = append(out, rv...)
	}
	out = append(out, "},"...)
	return append(out, diff[1:]...), nil
}
