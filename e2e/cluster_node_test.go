//go:build e2e

package e2e

import (
	"fmt"
	"os"
	goruntime "runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The node registers itself with what the scheduler and the
// controller-manager need, becomes Ready, and keeps its Lease fresh.
func TestClusterNodeReady(t *testing.T) {
	start := time.Now()
	n := startNode(t, "--register-with-taints", "e2e.podline.dev/tainted=yes:PreferNoSchedule")
	node := n.waitReady(60 * time.Second)
	t.Logf("podline started → node Ready: %s", time.Since(start))

	if got := node.Labels[nodeLabel]; got != n.name {
		t.Errorf("label %s = %q, want %q (--node-labels)", nodeLabel, got, n.name)
	}
	tainted := false
	for _, taint := range node.Spec.Taints {
		tainted = tainted || (taint.Key == "e2e.podline.dev/tainted" && taint.Value == "yes" && taint.Effect == v1.TaintEffectPreferNoSchedule)
	}
	if !tainted {
		t.Errorf("taints = %+v, want the one from --register-with-taints", node.Spec.Taints)
	}

	for _, r := range []v1.ResourceName{v1.ResourceCPU, v1.ResourceMemory, v1.ResourcePods} {
		c, a := node.Status.Capacity[r], node.Status.Allocatable[r]
		if c.Sign() <= 0 || a.Sign() <= 0 || a.Cmp(c) > 0 {
			t.Errorf("%s: capacity %s, allocatable %s: want 0 < allocatable <= capacity", r, c.String(), a.String())
		}
	}
	if cpu := node.Status.Capacity[v1.ResourceCPU]; cpu.Value() != int64(goruntime.NumCPU()) {
		t.Errorf("cpu capacity %s, this machine has %d", cpu.String(), goruntime.NumCPU())
	}
	if !hasAddress(node, v1.NodeInternalIP) {
		t.Errorf("addresses = %+v, want an InternalIP", node.Status.Addresses)
	}

	info := node.Status.NodeInfo
	kernel, _ := os.ReadFile("/proc/sys/kernel/osrelease")
	if info.KernelVersion != strings.TrimSpace(string(kernel)) {
		t.Errorf("kernelVersion = %q, want %q", info.KernelVersion, strings.TrimSpace(string(kernel)))
	}
	if !strings.HasPrefix(info.ContainerRuntimeVersion, "containerd://2.") {
		t.Errorf("containerRuntimeVersion = %q, want containerd://2.x", info.ContainerRuntimeVersion)
	}
	if info.KubeletVersion == "" || info.OSImage == "" {
		t.Errorf("nodeInfo = %+v: kubeletVersion and osImage must be set", info)
	}
	if info.OperatingSystem != "linux" || info.Architecture != goruntime.GOARCH {
		t.Errorf("nodeInfo os/arch = %s/%s", info.OperatingSystem, info.Architecture)
	}
	t.Logf("nodeInfo: kubelet %s, runtime %s, kernel %s, os %q", info.KubeletVersion, info.ContainerRuntimeVersion, info.KernelVersion, info.OSImage)

	for _, typ := range []v1.NodeConditionType{v1.NodeMemoryPressure, v1.NodeDiskPressure, v1.NodePIDPressure} {
		c := condition(node, typ)
		if c == nil || c.Reason == "" || c.LastHeartbeatTime.IsZero() {
			t.Errorf("condition %s = %+v, want it reported with a reason and heartbeat", typ, c)
			continue
		}
		if c.Status != v1.ConditionFalse {
			t.Logf("note: %s is %s on this machine (%s)", typ, c.Status, c.Message)
		}
	}

	leases := n.cp.admin.CoordinationV1().Leases("kube-node-lease")
	// The lease is made by its own loop, next to registration: it may
	// follow the Node's Ready by a moment.
	var lease *coordinationv1.Lease
	eventually(t, 10*time.Second, "node lease made", func() (bool, string) {
		var err error
		lease, err = leases.Get(apiCtx, n.name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return true, ""
	})
	if h := lease.Spec.HolderIdentity; h == nil || *h != n.name {
		t.Errorf("lease holder = %v, want %s", h, n.name)
	}
	if d := lease.Spec.LeaseDurationSeconds; d == nil || *d != 40 {
		t.Errorf("lease duration = %v, want the default 40", d)
	}
	first := lease.Spec.RenewTime
	if first == nil {
		t.Fatalf("lease has no renewTime")
	}
	// Renewed every quarter of its 40 s duration. A lease made before the
	// Node existed gets its owner (which deletes it with the Node) at a
	// renewal, as kubelet's does.
	eventually(t, 25*time.Second, "lease renewed and owned by the Node", func() (bool, string) {
		l, err := leases.Get(apiCtx, n.name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		renewed := l.Spec.RenewTime != nil && l.Spec.RenewTime.After(first.Time)
		owned := len(l.OwnerReferences) == 1 && l.OwnerReferences[0].Kind == "Node" && l.OwnerReferences[0].UID == node.UID
		return renewed && owned, fmt.Sprintf("renewTime %s (first %s), owners %+v", l.Spec.RenewTime, first, l.OwnerReferences)
	})
}

func hasAddress(node *v1.Node, typ v1.NodeAddressType) bool {
	for _, a := range node.Status.Addresses {
		if a.Type == typ && a.Address != "" {
			return true
		}
	}
	return false
}

// Once podline stops, its lease is not renewed, and the controller-manager
// marks the node NotReady (Unknown) after --node-monitor-grace-period, not
// before.
func TestClusterNodeNotReadyWhenStopped(t *testing.T) {
	n := startNode(t)
	n.waitReady(60 * time.Second)
	// The Node is Ready as soon as it is registered; the lease follows.
	leases := n.cp.admin.CoordinationV1().Leases("kube-node-lease")
	eventually(t, 20*time.Second, "node lease created", func() (bool, string) {
		_, err := leases.Get(apiCtx, n.name, metav1.GetOptions{})
		return err == nil, fmt.Sprint(err)
	})

	n.agent.cmd.Process.Signal(syscall.SIGTERM)
	<-n.agent.done
	stopped := time.Now()
	lease, err := leases.Get(apiCtx, n.name, metav1.GetOptions{})
	if err != nil || lease.Spec.RenewTime == nil {
		t.Fatalf("node lease: %v %+v", err, lease)
	}
	lastRenew := lease.Spec.RenewTime.Time

	grace := n.cp.monitorGrace
	var ready *v1.NodeCondition
	// The controller checks every 5 s (--node-monitor-period).
	eventually(t, grace+30*time.Second, "node NotReady after podline stopped", func() (bool, string) {
		node, err := n.node()
		if err != nil {
			return false, err.Error()
		}
		ready = condition(node, v1.NodeReady)
		return ready != nil && ready.Status == v1.ConditionUnknown, "Ready condition " + describeCondition(ready)
	})
	marked := time.Now()
	t.Logf("podline stopped → node NotReady after %s (grace period %s, last lease renewal %s before the stop)",
		marked.Sub(stopped).Round(time.Second), grace, stopped.Sub(lastRenew).Round(time.Second))
	if ready.Reason != "NodeStatusUnknown" {
		t.Errorf("Ready condition reason %q, want NodeStatusUnknown", ready.Reason)
	}
	// The lease was fresh until the stop: NotReady before the grace period
	// ran out would mean the controller did not see podline's renewals.
	if early := lastRenew.Add(grace - time.Second); marked.Before(early) {
		t.Errorf("node marked NotReady at %s, before the lease (renewed %s) expired", marked, lastRenew)
	}
}

func describeCondition(c *v1.NodeCondition) string {
	if c == nil {
		return "missing"
	}
	return string(c.Status) + " (" + c.Reason + ": " + c.Message + ")"
}
