package stages

import (
	v1 "k8s.io/api/core/v1"

	"github.com/podline/podline/pleg"
)

// replaceCreated plans the replacement of c, an instance that was created
// but never started: podline was killed between CreateContainer and
// StartContainer, or a start failed in between. A stop leaves such an
// instance as it is (containerd only stops running tasks), so stopping
// it, as once planned, changed nothing and the pod never started. The
// instance never ran, so removing it loses no log and no exit: it is
// removed, and a new one made with its attempt number, so that the restart
// count still says the container never restarted.
func replaceCreated(spec *v1.Container, c *pleg.Container, init bool, plan *ContainerPlan) {
	plan.Remove = append(plan.Remove, c.ID)
	plan.Start = append(plan.Start, StartAction{Spec: spec, Init: init, Attempt: c.Attempt})
}
