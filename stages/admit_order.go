package stages

import (
	"cmp"
	"slices"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// sortForAdmission orders pods that arrive together for admission, as the
// kubelet orders them: oldest creationTimestamp first (static pods have
// none, so they go before API pods). Pods the runtime already holds go
// before all others: they were admitted before podline restarted, so they
// fit together, and the kubelet's order by age alone would let a pod that
// was refused before the restart (for static pods: any of them, they all
// have the same zero age) take a running pod's room. Among those, the one
// whose sandbox is older goes first; remaining ties go by namespace, name
// and UID, so the order never depends on how the source listed them.
//
// running tells whether, and since when, the runtime holds a pod's
// sandboxes. The sort is in place.
func sortForAdmission(pods []*v1.Pod, running func(types.UID) (time.Time, bool)) {
	if len(pods) < 2 {
		return
	}
	type keyed struct {
		pod     *v1.Pod
		running bool
		since   time.Time
	}
	keys := make([]keyed, len(pods))
	for i, p := range pods {
		keys[i].pod = p
		keys[i].since, keys[i].running = running(p.UID)
	}
	slices.SortFunc(keys, func(a, b keyed) int {
		if a.running != b.running {
			if a.running {
				return -1
			}
			return 1
		}
		return cmp.Or(
			a.pod.CreationTimestamp.Time.Compare(b.pod.CreationTimestamp.Time),
			a.since.Compare(b.since),
			cmp.Compare(a.pod.Namespace, b.pod.Namespace),
			cmp.Compare(a.pod.Name, b.pod.Name),
			cmp.Compare(a.pod.UID, b.pod.UID),
		)
	})
	for i := range keys {
		pods[i] = keys[i].pod
	}
}
