package stages_test

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"

	"github.com/podline/podline/stages"
)

// The merger hands the pipeline the pods it keeps, shared and uncopied:
// a stage that wrote into one would change what the merger compares the
// next version against, and what /pods shows. A pod that goes through a
// whole life (a sidecar, volumes, env from the downward
// API, a spec update, removal) must come out as it went in.
func TestPipelineLeavesPodsUnmodified(t *testing.T) {
	h := newHarness(t, harnessOpts{queue: stages.QueueLockFree})
	always := v1.ContainerRestartPolicyAlways
	pod := testPod("shared", withEnv("A", "b"), func(p *v1.Pod) {
		p.Spec.InitContainers = []v1.Container{
			{Name: "side", Image: "busybox:1.36", Command: []string{"sleep", "3600"}, RestartPolicy: &always},
		}
		p.Spec.Volumes = []v1.Volume{{Name: "scratch", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}}}
		c := &p.Spec.Containers[0]
		c.VolumeMounts = []v1.VolumeMount{{Name: "scratch", MountPath: "/scratch"}}
		c.Env = append(c.Env, v1.EnvVar{Name: "NODE", ValueFrom: &v1.EnvVarSource{FieldRef: &v1.ObjectFieldSelector{FieldPath: "spec.nodeName"}}})
	})
	before := pod.DeepCopy()
	h.pipe.Upsert(pod)
	h.waitRunning(pod.UID)

	next := pod.DeepCopy()
	next.Spec.ActiveDeadlineSeconds = new(int64(3600))
	nextBefore := next.DeepCopy()
	h.pipe.Upsert(next)
	h.waitRunning(next.UID)
	h.pipe.Remove(pod.UID)
	h.waitGone(pod.UID)

	if !apiequality.Semantic.DeepEqual(pod, before) {
		t.Errorf("the pipeline modified the pod it was given")
	}
	if !apiequality.Semantic.DeepEqual(next, nextBefore) {
		t.Errorf("the pipeline modified the updated pod it was given")
	}
}
