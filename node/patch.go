package node

import (
	"encoding/json"
	"fmt"
	"sort"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
)

// statusChanged says whether two statuses differ in anything but the
// conditions' heartbeat times: a difference worth a write before the
// report period is up.
func statusChanged(old, cur *v1.NodeStatus) bool {
	if conditionsChanged(old.Conditions, cur.Conditions) {
		return true
	}
	a, b := old.DeepCopy(), cur.DeepCopy()
	a.Conditions, b.Conditions = nil, nil
	return !equality.Semantic.DeepEqual(a, b)
}

func conditionsChanged(old, cur []v1.NodeCondition) bool {
	if len(old) != len(cur) {
		return true
	}
	strip := func(cs []v1.NodeCondition) []v1.NodeCondition {
		out := append([]v1.NodeCondition(nil), cs...)
		for i := range out {
			out[i].LastHeartbeatTime = metav1.Time{}
		}
		sort.SliceStable(out, func(i, j int) bool { return out[i].Type < out[j].Type })
		return out
	}
	return !equality.Semantic.DeepEqual(strip(old), strip(cur))
}

// statusPatch is the strategic merge patch for nodes/<name>/status that
// turns old into cur: status and metadata (labels) only; the status
// subresource ignores spec anyway, and leaving it out keeps the patch from
// touching taints, which the node may not change.
//
// Addresses are declared as a list merged by type, which cannot express
// two InternalIPs or a removed one, so when they change the patch replaces
// the whole list.
func statusPatch(old, cur *v1.Node) ([]byte, error) {
	oldJSON, err := json.Marshal(old)
	if err != nil {
		return nil, fmt.Errorf("node status patch: %w", err)
	}
	diff := cur.DeepCopy()
	diff.Spec = old.Spec
	replaceAddresses := len(old.Status.Addresses) > 0 &&
		!equality.Semantic.DeepEqual(old.Status.Addresses, cur.Status.Addresses)
	if replaceAddresses {
		diff.Status.Addresses = old.Status.Addresses
	}
	curJSON, err := json.Marshal(diff)
	if err != nil {
		return nil, fmt.Errorf("node status patch: %w", err)
	}
	patch, err := strategicpatch.CreateTwoWayMergePatch(oldJSON, curJSON, v1.Node{})
	if err != nil {
		return nil, fmt.Errorf("node status patch: %w", err)
	}
	if !replaceAddresses {
		return patch, nil
	}
	var m map[string]any
	if err := json.Unmarshal(patch, &m); err != nil {
		return nil, fmt.Errorf("node status patch: %w", err)
	}
	status, _ := m["status"].(map[string]any)
	if status == nil {
		status = map[string]any{}
		m["status"] = status
	}
	addrs := make([]any, 0, len(cur.Status.Addresses)+1)
	for _, a := range cur.Status.Addresses {
		addrs = append(addrs, map[string]any{"type": string(a.Type), "address": a.Address})
	}
	status["addresses"] = append(addrs, map[string]any{"$patch": "replace"})
	return json.Marshal(m)
}
