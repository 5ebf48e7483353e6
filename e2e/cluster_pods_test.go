//go:build e2e

package e2e

import (
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A Deployment, placed by the real scheduler, comes up in the real
// runtime with pod IPs, as kubectl shows. Its pods are as a user writes
// them: the service account token is mounted.
func TestClusterDeployment(t *testing.T) {
	n := startNode(t)
	n.waitReady(60 * time.Second)

	replicas, grace := int32(3), int64(5)
	labels := map[string]string{"app": "web"}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: n.name},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: v1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: v1.PodSpec{
					// Other test nodes may exist; this one is ours.
					NodeSelector:                  map[string]string{nodeLabel: n.name},
					TerminationGracePeriodSeconds: &grace,
					Containers: []v1.Container{{
						Name:    "web",
						Image:   busybox,
						Command: []string{"sh", "-c", "trap 'exit 0' TERM; while true; do sleep 1; done"},
					}},
				},
			},
		},
	}
	start := time.Now()
	if _, err := n.cp.admin.AppsV1().Deployments(n.name).Create(apiCtx, d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var pods []v1.Pod
	eventually(t, 90*time.Second, "3 replicas Running", func() (bool, string) {
		list, err := n.cp.admin.CoreV1().Pods(n.name).List(apiCtx, metav1.ListOptions{LabelSelector: "app=web"})
		if err != nil {
			return false, err.Error()
		}
		pods = list.Items
		running := 0
		var states []string
		for i := range pods {
			if podRunning(&pods[i]) && pods[i].Status.PodIP != "" {
				running++
			}
			states = append(states, pods[i].Name+": "+describe(&pods[i]))
		}
		return len(pods) == 3 && running == 3, strings.Join(states, "; ")
	})
	t.Logf("Deployment created → 3 replicas Running with IPs: %s", time.Since(start))

	ips := map[string]bool{}
	for _, p := range pods {
		if p.Spec.NodeName != n.name {
			t.Errorf("pod %s scheduled to %q", p.Name, p.Spec.NodeName)
		}
		if !strings.HasPrefix(p.Status.PodIP, "10.88.") || ips[p.Status.PodIP] {
			t.Errorf("pod %s IP %q: want a distinct address from the CNI bridge (10.88.0.0/16)", p.Name, p.Status.PodIP)
		}
		ips[p.Status.PodIP] = true
		if c := podCondition(&p, v1.PodReady); c == nil || c.Status != v1.ConditionTrue {
			t.Errorf("pod %s Ready condition %+v", p.Name, c)
		}
		if sbs := runtimePods(t, string(p.UID)); len(sbs) != 1 {
			t.Errorf("pod %s has %d sandboxes in the runtime, want 1", p.Name, len(sbs))
		}
		if ids := runningContainers(t, string(p.UID)); len(ids) != 1 ||
			p.Status.ContainerStatuses[0].ContainerID != "containerd://"+ids[0] {
			t.Errorf("pod %s: running containers in the runtime %v, status says %s", p.Name, ids, p.Status.ContainerStatuses[0].ContainerID)
		}
	}

	out, err := exec.Command(n.cp.kubectl, "--kubeconfig", n.cp.kubeconfig, "get", "pods", "-n", n.name, "-o", "wide").CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl get pods -o wide: %v\n%s", err, out)
	}
	t.Logf("kubectl get pods -o wide:\n%s", out)
	for _, p := range pods {
		if !kubectlRowHas(string(out), p.Name, "Running", p.Status.PodIP, n.name) {
			t.Errorf("kubectl shows no row for %s with Running, %s and %s", p.Name, p.Status.PodIP, n.name)
		}
	}
}

// kubectlRowHas reports whether the table row of name holds every field.
func kubectlRowHas(table, name string, want ...string) bool {
	for _, line := range strings.Split(table, "\n") {
		fields := strings.Fields(line)
		if len(fields) == 0 || fields[0] != name {
			continue
		}
		have := map[string]bool{}
		for _, f := range fields {
			have[f] = true
		}
		for _, w := range want {
			if !have[w] {
				return false
			}
		}
		return true
	}
	return false
}

func podCondition(p *v1.Pod, typ v1.PodConditionType) *v1.PodCondition {
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == typ {
			return &p.Status.Conditions[i]
		}
	}
	return nil
}

// Deleting a pod stops its containers first; only then does the API object
// go.
func TestClusterPodDeletion(t *testing.T) {
	n := startNode(t)
	n.waitReady(60 * time.Second)
	p := n.createPod(n.apiPod("victim", "while true; do sleep 1; done"))
	p = n.waitAPIPod(n.name, p.Name, "Running", 60*time.Second, podRunning)
	uid := string(p.UID)
	if len(runningContainers(t, uid)) != 1 {
		t.Fatalf("want one running container in the runtime")
	}

	start := time.Now()
	if err := n.cp.admin.CoreV1().Pods(n.name).Delete(apiCtx, p.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "pod object deleted", func() (bool, string) {
		got, err := n.cp.admin.CoreV1().Pods(n.name).Get(apiCtx, p.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, ""
		}
		if err != nil {
			return false, err.Error()
		}
		return false, fmt.Sprintf("deletionTimestamp %v, %s", got.DeletionTimestamp, describe(got))
	})
	took := time.Since(start)
	if ids := runningContainers(t, uid); len(ids) != 0 {
		t.Fatalf("the API object is gone but containers %v still run", ids)
	}
	t.Logf("delete (grace 5s, container exits on TERM) → object gone, containers stopped: %s", took)
	eventually(t, 20*time.Second, "sandbox removed from the runtime", func() (bool, string) {
		sbs := runtimePods(t, uid)
		return len(sbs) == 0, fmt.Sprintf("sandboxes %v", sbs)
	})
}

// A pod the node cannot run is rejected as kubelet does: phase Failed, a
// reason naming why, and nothing started in the runtime. nodeName is set
// directly, so the scheduler's own checks are not in the way.
func TestClusterAdmissionRejects(t *testing.T) {
	n := startNode(t)
	n.waitReady(60 * time.Second)

	tooMuchCPU := n.apiPod("too-much-cpu", "sleep 3600")
	tooMuchCPU.Spec.Containers[0].Resources.Requests = v1.ResourceList{v1.ResourceCPU: resource.MustParse("1000")}
	tooMuchMemory := n.apiPod("too-much-memory", "sleep 3600")
	tooMuchMemory.Spec.Containers[0].Resources.Requests = v1.ResourceList{v1.ResourceMemory: resource.MustParse("100Ti")}
	elsewhere := n.apiPod("elsewhere", "sleep 3600")
	elsewhere.Spec.NodeSelector = map[string]string{nodeLabel: "some-other-node"}

	for _, c := range []struct {
		pod    *v1.Pod
		reason string
	}{
		{tooMuchCPU, "OutOfcpu"},
		{tooMuchMemory, "OutOfmemory"},
		{elsewhere, "NodeAffinity"},
	} {
		created := n.createPod(c.pod)
		p := n.waitAPIPod(n.name, created.Name, "Failed", 30*time.Second, func(p *v1.Pod) bool {
			return p.Status.Phase == v1.PodFailed
		})
		if p.Status.Reason != c.reason || p.Status.Message == "" {
			t.Errorf("%s: reason %q message %q, want reason %s and a message", p.Name, p.Status.Reason, p.Status.Message, c.reason)
		}
		if sbs := runtimePods(t, string(p.UID)); len(sbs) != 0 {
			t.Errorf("%s: rejected, yet sandboxes %v exist", p.Name, sbs)
		}
		t.Logf("%s: %s: %s", p.Name, p.Status.Reason, p.Status.Message)
	}
}
