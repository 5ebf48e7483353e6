//go:build e2e

package e2e

import (
	"fmt"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A static pod shows in the API as a mirror pod, with its status. Deleting
// the mirror does not touch the static pod and the mirror comes back;
// removing the manifest removes both.
func TestClusterMirrorPod(t *testing.T) {
	n := startNode(t)
	n.waitReady(60 * time.Second)
	pods := n.cp.admin.CoreV1().Pods("default")
	name := "static-" + n.name

	start := time.Now()
	n.agent.writeManifest("static.yaml", pod("static", "Always", "while true; do sleep 1; done"))
	mirror := n.waitAPIPod("default", name, "mirrored and Running", 60*time.Second, func(p *v1.Pod) bool {
		return p.Annotations[mirrorAnnotation] != "" && podRunning(p)
	})
	t.Logf("manifest written → mirror pod Running in the API: %s", time.Since(start))
	staticUID := mirror.Annotations[mirrorAnnotation]
	if mirror.UID == "" || string(mirror.UID) == staticUID {
		t.Errorf("mirror UID %q: want the API server's own, not the static pod's %s", mirror.UID, staticUID)
	}
	if mirror.Spec.NodeName != n.name {
		t.Errorf("mirror nodeName = %q", mirror.Spec.NodeName)
	}
	local := n.staticPod(name)
	if local == nil || string(local.UID) != staticUID {
		t.Fatalf("podline's /pods has %s as %v; the mirror annotation says UID %s", name, local, staticUID)
	}
	sandboxes := runtimePods(t, staticUID)
	containers := runningContainers(t, staticUID)
	if len(sandboxes) != 1 || len(containers) != 1 {
		t.Fatalf("static pod in the runtime: sandboxes %v, running containers %v", sandboxes, containers)
	}

	zero := int64(0)
	if err := pods.Delete(apiCtx, name, metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		t.Fatal(err)
	}
	deleted := time.Now()
	n.waitAPIPod("default", name, "recreated", 30*time.Second, func(p *v1.Pod) bool {
		return p.UID != mirror.UID && p.Annotations[mirrorAnnotation] == staticUID
	})
	t.Logf("mirror pod deleted → recreated: %s", time.Since(deleted))
	if now := runtimePods(t, staticUID); len(now) != 1 || now[0] != sandboxes[0] {
		t.Errorf("deleting the mirror pod touched the static pod: sandboxes %v → %v", sandboxes, now)
	}
	if now := runningContainers(t, staticUID); len(now) != 1 || now[0] != containers[0] {
		t.Errorf("deleting the mirror pod touched the static pod: containers %v → %v", containers, now)
	}

	removed := time.Now()
	n.agent.removeManifest("static.yaml")
	eventually(t, 30*time.Second, "mirror pod removed", func() (bool, string) {
		p, err := pods.Get(apiCtx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, ""
		}
		if err != nil {
			return false, err.Error()
		}
		return false, fmt.Sprintf("still there, deletionTimestamp %v", p.DeletionTimestamp)
	})
	eventually(t, 30*time.Second, "static pod gone from the runtime", func() (bool, string) {
		sbs := runtimePods(t, staticUID)
		return len(sbs) == 0, fmt.Sprintf("sandboxes %v", sbs)
	})
	t.Logf("manifest removed → mirror and static pod gone: %s", time.Since(removed))
}

// staticPod finds a pod by its full name in podline's /pods.
func (n *clusterNode) staticPod(name string) *v1.Pod {
	n.t.Helper()
	pods, err := n.agent.pods()
	if err != nil {
		n.t.Fatal(err)
	}
	for i := range pods {
		if pods[i].Name == name {
			return &pods[i]
		}
	}
	return nil
}
