package stages

import (
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podline/podline/pleg"
)

// terminationMessages remembers the termination message of each exited
// container instance a pod's status shows, so each instance's files are
// read once, when its exit is first seen, and not on every status pass.
// A pod's entry is only used on the pod's own pass, so no two workers
// ever use one at the same time; the map of pods is what needs the lock.
type terminationMessages struct {
	pods sync.Map // types.UID → map[string]string, container ID → message
}

// of returns the messages of the pod's exited instances by container ID,
// reading those not read yet, and forgets instances the runtime no longer
// has. The map is the cache's own: callers only read it.
func (t *terminationMessages) of(node *Node, pod *v1.Pod, rt *pleg.Pod) map[string]string {
	var known map[string]string
	if v, ok := t.pods.Load(pod.UID); ok {
		known = v.(map[string]string)
	}
	for _, specs := range [][]v1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range specs {
			spec := &specs[i]
			cur := rt.Latest(spec.Name)
			for _, c := range []*pleg.Container{cur, rt.Previous(cur)} {
				if c == nil || c.State != pleg.ContainerExited {
					continue
				}
				if _, ok := known[c.ID]; ok {
					continue
				}
				// An exit seen only in a list has no exit code yet, which
				// decides whether the log is read: wait for its inspection.
				if !c.Detailed && c.FinishedAt.IsZero() {
					continue
				}
				msg, final := readTerminationMessage(node, pod, spec, c)
				if !final {
					continue
				}
				if known == nil {
					known = make(map[string]string)
					t.pods.Store(pod.UID, known)
				}
				known[c.ID] = msg
			}
		}
	}
	for id := range known {
		if rt.Container(id) == nil {
			delete(known, id)
		}
	}
	if known != nil && len(known) == 0 {
		t.pods.Delete(pod.UID)
	}
	return known
}

// forget drops a pod's messages once the pod is gone.
func (t *terminationMessages) forget(uid types.UID) {
	t.pods.Delete(uid)
}
