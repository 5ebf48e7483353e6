package stages

import (
	"cmp"
	"slices"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// inRuntime is what the runtime holds of a pod, for the admission order.
type inRuntime struct {
	// Since is when the pod's oldest sandbox was made; zero when the
	// runtime holds none.
	Since time.Time
	// Ready is set when its current sandbox is ready: the pod runs.
	Ready bool
}

// sortForAdmission orders pods that arrive together for admission, as the
// kubelet orders them: oldest creationTimestamp first (static pods have
// none, so they go before API pods). Pods that run, their sandbox ready,
// go before all others: they were admitted before podline restarted, so
// they fit together, and the kubelet's order by age alone would let an
// older pod that is not running take their room: a finished pod whose
// share was given back, a pod refused before the restart, or, for static
// pods, any of them (they all have the same zero age). At the same age a
// pod the runtime holds goes before one it does not, the older sandbox
// first; remaining ties go by namespace, name and UID, so the order never
// depends on how the source listed them.
//
// runtime tells what the runtime holds of a pod. The sort is in place.
func sortForAdmission(pods []*v1.Pod, runtime func(types.UID) inRuntime) {
	if len(pods) < 2 {
		return
	}
	type keyed struct {
		pod *v1.Pod
		rt  inRuntime
	}
	keys := make([]keyed, len(pods))
	for i, p := range pods {
		keys[i] = keyed{pod: p, rt: runtime(p.UID)}
	}
	first := func(a, b bool) int {
		switch {
		case a == b:
			return 0
		case a:
			return -1
		}
		return 1
	}
	slices.SortFunc(keys, func(a, b keyed) int {
		return cmp.Or(
			first(a.rt.Ready, b.rt.Ready),
			a.pod.CreationTimestamp.Time.Compare(b.pod.CreationTimestamp.Time),
			first(!a.rt.Since.IsZero(), !b.rt.Since.IsZero()),
			a.rt.Since.Compare(b.rt.Since),
			cmp.Compare(a.pod.Namespace, b.pod.Namespace),
			cmp.Compare(a.pod.Name, b.pod.Name),
			cmp.Compare(a.pod.UID, b.pod.UID),
		)
	})
	for i := range keys {
		pods[i] = keys[i].pod
	}
}
