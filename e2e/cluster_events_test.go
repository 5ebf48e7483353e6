//go:build e2e

package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// podEvents lists the events about one pod as "Type Reason fieldPath: message".
func (n *clusterNode) podEvents(p *v1.Pod) []string {
	n.t.Helper()
	list, err := n.cp.admin.CoreV1().Events(p.Namespace).List(apiCtx, metav1.ListOptions{
		FieldSelector: "involvedObject.uid=" + string(p.UID),
	})
	if err != nil {
		n.t.Fatalf("list events: %v", err)
	}
	var out []string
	for _, e := range list.Items {
		if e.Source.Component != "kubelet" || e.Source.Host != n.name {
			n.t.Errorf("event %s from %+v, want kubelet on %s", e.Reason, e.Source, n.name)
		}
		out = append(out, fmt.Sprintf("%s %s %s: %s", e.Type, e.Reason, e.InvolvedObject.FieldPath, e.Message))
	}
	return out
}

// waitEvent waits until an event about p contains every part of want.
func (n *clusterNode) waitEvent(p *v1.Pod, want ...string) {
	n.t.Helper()
	eventually(n.t, 30*time.Second, fmt.Sprintf("event %q about %s", want, p.Name), func() (bool, string) {
		evs := n.podEvents(p)
		for _, e := range evs {
			if containsAll(e, want) {
				return true, ""
			}
		}
		return false, strings.Join(evs, "\n")
	})
}

func containsAll(s string, parts []string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}

// A pod as users write them: a configMap volume, an environment variable
// from the same configMap, the service account token volume the API
// server adds, and the API server's service variables. Its files are in the container, and
// each step shows up as an event, through to Killing on delete. A volume
// whose configMap is missing reports FailedMount until the configMap
// appears; then the pod starts.
func TestClusterVolumesAndEvents(t *testing.T) {
	n := startNode(t)
	n.waitReady(60 * time.Second)

	p := n.apiPod("reader", "echo env:$GREETING; echo svc:$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT; cat /etc/cfg/greeting; echo; cat /var/run/secrets/kubernetes.io/serviceaccount/namespace; echo; "+
		"test -s /var/run/secrets/kubernetes.io/serviceaccount/token && echo token-ok; "+
		"touch /etc/cfg/x 2>/dev/null || echo read-only; sleep 3600")
	yes := true
	p.Spec.AutomountServiceAccountToken = &yes
	p.Spec.Volumes = []v1.Volume{{Name: "cfg", VolumeSource: v1.VolumeSource{
		ConfigMap: &v1.ConfigMapVolumeSource{LocalObjectReference: v1.LocalObjectReference{Name: "greeting"}},
	}}}
	p.Spec.Containers[0].VolumeMounts = []v1.VolumeMount{{Name: "cfg", MountPath: "/etc/cfg"}}
	p.Spec.Containers[0].Env = []v1.EnvVar{{Name: "GREETING", ValueFrom: &v1.EnvVarSource{ConfigMapKeyRef: &v1.ConfigMapKeySelector{
		LocalObjectReference: v1.LocalObjectReference{Name: "greeting"}, Key: "greeting"}}}}
	created := n.createPod(p)

	n.waitEvent(created, "Warning FailedMount", `MountVolume.SetUp failed for volume "cfg" : configmap "greeting" not found`)
	if got := n.waitAPIPod(n.name, p.Name, "Pending", 5*time.Second, func(*v1.Pod) bool { return true }); got.Status.Phase != v1.PodPending {
		t.Fatalf("pod with a missing configMap: phase %s, want Pending", got.Status.Phase)
	}
	cm := &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "greeting", Namespace: n.name}, Data: map[string]string{"greeting": "hello from the API"}}
	if _, err := n.cp.admin.CoreV1().ConfigMaps(n.name).Create(apiCtx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	running := n.waitAPIPod(n.name, p.Name, "Running", 60*time.Second, podRunning)
	eventually(t, 10*time.Second, "the container printed its volumes", func() (bool, string) {
		log := n.agent.readLog(running, "app", 0)
		return containsAll(log, []string{"env:hello from the API", "svc:10.96.0.1:443", "hello from the API\n", n.name, "token-ok", "read-only"}), log
	})
	// The status says which spec it was computed from, and lists the
	// container's mounts (the token's too, added by the API server), as
	// the kubelet's does.
	if running.Status.ObservedGeneration != running.Generation || running.Generation == 0 {
		t.Errorf("status observedGeneration %d, pod generation %d", running.Status.ObservedGeneration, running.Generation)
	}
	for _, c := range running.Status.Conditions {
		if c.Type != "DisruptionTarget" && c.ObservedGeneration != running.Generation {
			t.Errorf("condition %s observedGeneration %d, want %d", c.Type, c.ObservedGeneration, running.Generation)
		}
	}
	mounts := map[string]string{}
	for _, m := range running.Status.ContainerStatuses[0].VolumeMounts {
		mounts[m.MountPath] = m.Name
	}
	if mounts["/etc/cfg"] != "cfg" || !strings.HasPrefix(mounts["/var/run/secrets/kubernetes.io/serviceaccount"], "kube-api-access-") {
		t.Errorf("status volumeMounts %+v, want the configMap's and the token's", running.Status.ContainerStatuses[0].VolumeMounts)
	}
	for _, want := range [][]string{
		{"Normal Pulled spec.containers{app}", "already present on machine"},
		{"Normal Created spec.containers{app}"},
		{"Normal Started spec.containers{app}"},
	} {
		n.waitEvent(running, want...)
	}

	if err := n.cp.admin.CoreV1().Pods(n.name).Delete(apiCtx, p.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	n.waitEvent(running, "Normal Killing spec.containers{app}", "Stopping container app")
}

// An OOM kill the event plane sees is reported on the pod, and the pod's
// final status in the API says OOMKilled.
func TestClusterOOMKillingEvent(t *testing.T) {
	n := startNode(t)
	n.waitReady(60 * time.Second)
	p := n.apiPod("oom", "sleep 1; exec dd if=/dev/zero of=/dev/null bs=100M count=1")
	p.Spec.RestartPolicy = v1.RestartPolicyNever
	p.Spec.Containers[0].Resources.Limits = v1.ResourceList{v1.ResourceMemory: resource.MustParse("32Mi")}
	created := n.createPod(p)
	failed := n.waitAPIPod(n.name, p.Name, "Failed", 60*time.Second, func(p *v1.Pod) bool { return p.Status.Phase == v1.PodFailed })
	if term := failed.Status.ContainerStatuses[0].State.Terminated; term == nil || term.Reason != "OOMKilled" {
		t.Fatalf("container state %+v, want OOMKilled", failed.Status.ContainerStatuses[0].State)
	}
	n.waitEvent(created, "Warning OOMKilling spec.containers{app}", "Memory cgroup out of memory")
}
