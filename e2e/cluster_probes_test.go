//go:build e2e

package e2e

import (
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// TestClusterReadinessGatesEndpoints: a Deployment behind a Service whose
// pods pass their HTTP readiness probe only after 5 s. In the API their
// Ready condition is False, and the EndpointSlice lists them not ready,
// until the probe passes; then both turn, as the controllers see it.
func TestClusterReadinessGatesEndpoints(t *testing.T) {
	n := startNode(t)
	n.waitReady(60 * time.Second)

	replicas, grace := int32(2), int64(2)
	labels := map[string]string{"app": "probed"}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "probed", Namespace: n.name},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: v1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: v1.PodSpec{
					NodeSelector:                  map[string]string{nodeLabel: n.name},
					TerminationGracePeriodSeconds: &grace,
					Containers: []v1.Container{{
						Name:    "web",
						Image:   busybox,
						Command: []string{"sh", "-c", "trap 'exit 0' TERM; mkdir /www; httpd -p 8080 -h /www; sleep 5; echo ok > /www/healthz; while true; do sleep 1; done"},
						Ports:   []v1.ContainerPort{{Name: "http", ContainerPort: 8080}},
						ReadinessProbe: &v1.Probe{
							ProbeHandler:  v1.ProbeHandler{HTTPGet: &v1.HTTPGetAction{Path: "/healthz", Port: intstr.FromString("http")}},
							PeriodSeconds: 1,
						},
					}},
				},
			},
		},
	}
	svc := &v1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "probed", Namespace: n.name},
		Spec:       v1.ServiceSpec{Selector: labels, Ports: []v1.ServicePort{{Port: 80, TargetPort: intstr.FromString("http")}}},
	}
	if _, err := n.cp.admin.CoreV1().Services(n.name).Create(apiCtx, svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	created := time.Now()
	if _, err := n.cp.admin.AppsV1().Deployments(n.name).Create(apiCtx, d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	// endpoints reads the Service's slices: addresses by readiness.
	endpoints := func() (ready, notReady int, desc string) {
		list, err := n.cp.admin.DiscoveryV1().EndpointSlices(n.name).List(apiCtx, metav1.ListOptions{
			LabelSelector: discoveryv1.LabelServiceName + "=probed"})
		if err != nil {
			return 0, 0, err.Error()
		}
		var parts []string
		for _, s := range list.Items {
			for _, e := range s.Endpoints {
				r := e.Conditions.Ready != nil && *e.Conditions.Ready
				if r {
					ready++
				} else {
					notReady++
				}
				parts = append(parts, strings.Join(e.Addresses, ",")+map[bool]string{true: " ready", false: " not ready"}[r])
			}
		}
		return ready, notReady, strings.Join(parts, "; ")
	}
	pods := func() []v1.Pod {
		list, err := n.cp.admin.CoreV1().Pods(n.name).List(apiCtx, metav1.ListOptions{LabelSelector: "app=probed"})
		if err != nil {
			t.Fatal(err)
		}
		return list.Items
	}

	// Followed until both pods are Ready and listed ready: each pod must
	// be seen running and unready first, and no address may be listed
	// ready before its pod's probe could pass (5 s after creation).
	unready := map[string]time.Duration{}
	readyAt := map[string]time.Duration{}
	notReadyListed := 0
	eventually(t, 90*time.Second, "2 pods Ready and ready in the EndpointSlice", func() (bool, string) {
		now := time.Since(created)
		ps := pods()
		readyPods := 0
		for i := range ps {
			p := &ps[i]
			ready := podCondition(p, v1.PodReady) != nil && podCondition(p, v1.PodReady).Status == v1.ConditionTrue
			switch {
			case ready:
				readyPods++
				if _, ok := readyAt[p.Name]; !ok {
					readyAt[p.Name] = now
				}
			case p.Status.Phase == v1.PodRunning && p.Status.PodIP != "" && len(p.Status.ContainerStatuses) == 1 &&
				p.Status.ContainerStatuses[0].State.Running != nil:
				if _, ok := unready[p.Name]; !ok {
					unready[p.Name] = now
				}
			}
		}
		ready, notReady, desc := endpoints()
		notReadyListed = max(notReadyListed, notReady)
		if ready > 0 && now < 5*time.Second {
			t.Errorf("endpoints listed ready %s after creation, before a probe could pass: %s", now, desc)
		}
		return len(ps) == 2 && readyPods == 2 && ready == 2, desc
	})
	for name, at := range readyAt {
		u, ok := unready[name]
		switch {
		case !ok:
			t.Errorf("pod %s was never seen running and not Ready", name)
		case at < 5*time.Second:
			t.Errorf("pod %s Ready %s after creation, before its probe could pass", name, at)
		default:
			t.Logf("pod %s running and not Ready at %s, Ready at %s after the Deployment was created",
				name, u.Round(time.Millisecond), at.Round(time.Millisecond))
		}
	}
	t.Logf("the EndpointSlice listed at most %d addresses not ready before listing both ready (%s)",
		notReadyListed, time.Since(created).Round(time.Millisecond))
}

// TestClusterLivenessEvents: a liveness failure is reported as the kubelet
// reports it: Unhealthy with the probe's output, Killing with the restart
// message, and the restart in the status.
func TestClusterLivenessEvents(t *testing.T) {
	n := startNode(t)
	n.waitReady(60 * time.Second)
	p := n.apiPod("live", "touch /tmp/alive; sleep 2; rm /tmp/alive; while true; do sleep 1; done")
	p.Spec.Containers[0].LivenessProbe = &v1.Probe{
		ProbeHandler:     v1.ProbeHandler{Exec: &v1.ExecAction{Command: []string{"cat", "/tmp/alive"}}},
		PeriodSeconds:    1,
		FailureThreshold: 2,
	}
	created := n.createPod(p)
	n.waitAPIPod(n.name, p.Name, "restarted", 60*time.Second, func(p *v1.Pod) bool {
		return len(p.Status.ContainerStatuses) == 1 && p.Status.ContainerStatuses[0].RestartCount >= 1
	})
	n.waitEvent(created, "Warning Unhealthy spec.containers{app}", "Liveness probe failed:", "No such file or directory")
	n.waitEvent(created, "Normal Killing spec.containers{app}", "Container app failed liveness probe, will be restarted")
}
