package sources

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestApplyDefaults(t *testing.T) {
	p := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "a"},
		Spec: v1.PodSpec{
			HostNetwork:    true,
			InitContainers: []v1.Container{{Name: "init", Image: "busybox:1"}},
			Containers: []v1.Container{{
				Name: "c", Image: "app",
				Ports: []v1.ContainerPort{{ContainerPort: 8080}},
				Env:   []v1.EnvVar{{Name: "N", ValueFrom: &v1.EnvVarSource{FieldRef: &v1.ObjectFieldSelector{FieldPath: "spec.nodeName"}}}},
				Resources: v1.ResourceRequirements{
					Limits:   v1.ResourceList{v1.ResourceCPU: resource.MustParse("1"), v1.ResourceMemory: resource.MustParse("1Gi")},
					Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("100m")},
				},
				LivenessProbe: &v1.Probe{ProbeHandler: v1.ProbeHandler{HTTPGet: &v1.HTTPGetAction{}}},
			}},
			Volumes: []v1.Volume{
				{Name: "scratch"},
				{Name: "host", VolumeSource: v1.VolumeSource{HostPath: &v1.HostPathVolumeSource{Path: "/srv"}}},
				{Name: "cm", VolumeSource: v1.VolumeSource{ConfigMap: &v1.ConfigMapVolumeSource{}}},
			},
		},
	}
	ApplyDefaults(p)
	s := p.Spec
	check := func(what string, got, want any) {
		t.Helper()
		if !apiequality.Semantic.DeepEqual(got, want) {
			t.Errorf("%s: got %v, want %v", what, got, want)
		}
	}
	check("namespace", p.Namespace, "default")
	check("restartPolicy", s.RestartPolicy, v1.RestartPolicyAlways)
	check("dnsPolicy", s.DNSPolicy, v1.DNSClusterFirst)
	check("terminationGracePeriodSeconds", *s.TerminationGracePeriodSeconds, int64(30))
	check("schedulerName", s.SchedulerName, "default-scheduler")
	check("enableServiceLinks", *s.EnableServiceLinks, true)
	check("securityContext", s.SecurityContext != nil, true)
	for _, c := range []v1.Container{s.InitContainers[0], s.Containers[0]} {
		check(c.Name+" terminationMessagePath", c.TerminationMessagePath, "/dev/termination-log")
		check(c.Name+" terminationMessagePolicy", c.TerminationMessagePolicy, v1.TerminationMessageReadFile)
	}
	check("init pull policy", s.InitContainers[0].ImagePullPolicy, v1.PullIfNotPresent)
	c := s.Containers[0]
	check("pull policy", c.ImagePullPolicy, v1.PullAlways)
	check("protocol", c.Ports[0].Protocol, v1.ProtocolTCP)
	check("host network hostPort", c.Ports[0].HostPort, int32(8080))
	check("fieldRef apiVersion", c.Env[0].ValueFrom.FieldRef.APIVersion, "v1")
	check("explicit request kept", c.Resources.Requests[v1.ResourceCPU], resource.MustParse("100m"))
	check("request defaults to limit", c.Resources.Requests[v1.ResourceMemory], resource.MustParse("1Gi"))
	pr := c.LivenessProbe
	check("probe", []int32{pr.TimeoutSeconds, pr.PeriodSeconds, pr.SuccessThreshold, pr.FailureThreshold}, []int32{1, 10, 1, 3})
	check("probe httpGet", []string{pr.HTTPGet.Path, string(pr.HTTPGet.Scheme)}, []string{"/", "HTTP"})
	check("volume without source", s.Volumes[0].EmptyDir != nil, true)
	check("hostPath type", *s.Volumes[1].HostPath.Type, v1.HostPathUnset)
	check("configMap mode", *s.Volumes[2].ConfigMap.DefaultMode, int32(0o644))
	if errs := Validate(p); len(errs) > 0 {
		t.Errorf("defaulted pod is invalid: %v", errs)
	}

	// Set values are left alone.
	q := testPod("b", "u")
	q.Namespace, q.Spec.RestartPolicy = "kube-system", v1.RestartPolicyNever
	q.Spec.TerminationGracePeriodSeconds = ptrTo(int64(0))
	q.Spec.Containers[0].ImagePullPolicy = v1.PullNever
	before := q.DeepCopy()
	ApplyDefaults(q)
	check("explicit values", q, before)
}
