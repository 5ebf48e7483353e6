package sources

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// staticToleration lets static pods stay on a node tainted NoExecute: nothing
// else could run them there.
var staticToleration = v1.Toleration{Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoExecute}

// MakeStatic gives a pod read from a manifest its node-local identity, in
// place. Call it on the pod exactly as decoded, before any other change.
//
//   - UID: a hash of the decoded pod, the source, the location (file path or
//     URL) and the node name, so re-reading an unchanged manifest gives the
//     same UID in any process, and changing the content, the file or the
//     node gives a new pod. A uid written in the manifest is kept, as the
//     kubelet keeps it: whoever writes one takes on keeping it unique, and
//     Validate refuses one that could not be a single path element (the
//     pod's directories and cgroup are named after it; see internal/poduid).
//   - name "<name>-<nodeName>", spec.nodeName, annotations config.hash (the
//     UID) and config.source, a NoExecute toleration, phase Pending.
//
// config.seen is written by the Merger the first time it sees the UID.
func MakeStatic(pod *v1.Pod, source, location, nodeName string) error {
	content, err := json.Marshal(pod)
	if err != nil {
		return fmt.Errorf("hash pod %q from %s: %w", pod.Name, location, err)
	}
	if pod.UID == "" {
		pod.UID = staticUID(content, source, location, nodeName)
	}
	if pod.Name != "" { // left empty, validation reports it as required
		pod.Name = pod.Name + "-" + nodeName
	}
	pod.Spec.NodeName = nodeName
	if pod.Annotations == nil {
		pod.Annotations = make(map[string]string, 2)
	}
	pod.Annotations[ConfigHashAnnotation] = string(pod.UID)
	pod.Annotations[ConfigSourceAnnotation] = source
	if !hasToleration(pod.Spec.Tolerations, staticToleration) {
		pod.Spec.Tolerations = append(pod.Spec.Tolerations, staticToleration)
	}
	pod.Status = v1.PodStatus{Phase: v1.PodPending}
	return nil
}

// staticUID is 128 bits of SHA-256 in hex: the length of kubelet's static
// pod UIDs, so it fits wherever those fit (cgroup names, directories).
// Fields are NUL-separated so that no two inputs run together.
func staticUID(content []byte, source, location, nodeName string) types.UID {
	h := sha256.New()
	h.Write(content)
	for _, s := range []string{source, location, nodeName} {
		h.Write([]byte{0})
		h.Write([]byte(s))
	}
	sum := h.Sum(nil)
	return types.UID(hex.EncodeToString(sum[:16]))
}

func hasToleration(ts []v1.Toleration, want v1.Toleration) bool {
	for _, t := range ts {
		if t.MatchToleration(&want) {
			return true
		}
	}
	return false
}
