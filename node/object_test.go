package node

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
)

func TestInitialNode(t *testing.T) {
	c := testConfig()
	c.Hostname = "host-a"
	c.KubeletPort = 10250
	c.Labels = map[string]string{"example.com/pool": "a", "topology.kubernetes.io/zone": "z1"}
	n, events := initialNode(&c, t0, Health{})

	wantLabels := map[string]string{
		"kubernetes.io/hostname": "host-a", "kubernetes.io/os": goos, "kubernetes.io/arch": goarch,
		"beta.kubernetes.io/os": goos, "beta.kubernetes.io/arch": goarch,
		"example.com/pool": "a", "topology.kubernetes.io/zone": "z1",
	}
	if n.Name != "node-a" || !equality.Semantic.DeepEqual(n.Labels, wantLabels) {
		t.Fatalf("name %s labels %v, want %v", n.Name, n.Labels, wantLabels)
	}
	if !equality.Semantic.DeepEqual(n.Spec.Taints, c.Taints) {
		t.Fatalf("taints %v", n.Spec.Taints)
	}
	st := n.Status
	if !equality.Semantic.DeepEqual(st.Capacity, c.Capacity) || !equality.Semantic.DeepEqual(st.Allocatable, c.Allocatable) {
		t.Fatalf("capacity %v allocatable %v", st.Capacity, st.Allocatable)
	}
	if a := st.Allocatable[v1.ResourceCPU]; a.MilliValue() != 1900 {
		t.Fatalf("allocatable cpu %s", a.String())
	}
	if !slices.Equal(st.Addresses, []v1.NodeAddress{{Type: v1.NodeInternalIP, Address: "10.0.0.5"}, {Type: v1.NodeHostName, Address: "node-a"}}) {
		t.Fatalf("addresses %v", st.Addresses)
	}
	if st.NodeInfo != c.Info || st.DaemonEndpoints.KubeletEndpoint.Port != 10250 {
		t.Fatalf("nodeInfo %+v endpoints %+v", st.NodeInfo, st.DaemonEndpoints)
	}
	var types []v1.NodeConditionType
	for _, cond := range st.Conditions {
		types = append(types, cond.Type)
		if !cond.LastHeartbeatTime.Time.Equal(t0) || !cond.LastTransitionTime.Time.Equal(t0) {
			t.Errorf("%s: heartbeat %v transition %v, want both %v", cond.Type, cond.LastHeartbeatTime, cond.LastTransitionTime, t0)
		}
	}
	if !slices.Equal(types, []v1.NodeConditionType{v1.NodeMemoryPressure, v1.NodeDiskPressure, v1.NodePIDPressure, v1.NodeReady}) {
		t.Fatalf("conditions in order %v", types)
	}
	ready := condition(t, n, v1.NodeReady)
	if ready.Status != v1.ConditionTrue || ready.Reason != "KubeletReady" || ready.Message != "kubelet is posting ready status" {
		t.Fatalf("ready %+v", ready)
	}
	if mem := condition(t, n, v1.NodeMemoryPressure); mem.Status != v1.ConditionFalse || mem.Reason != "KubeletHasSufficientMemory" {
		t.Fatalf("memory %+v", mem)
	}
	if !slices.Equal(events, []string{"NodeHasSufficientMemory", "NodeHasNoDiskPressure", "NodeHasSufficientPID"}) {
		t.Fatalf("events %v", events)
	}
	// The node holds copies: changing it leaves the config alone.
	n.Status.Capacity[v1.ResourcePods] = *cpu("1")
	n.Spec.Taints[0].Key = "changed"
	if q := c.Capacity[v1.ResourcePods]; q.Value() != 110 || c.Taints[0].Key != "dedicated" {
		t.Fatal("the node shares maps or slices with the config")
	}
}

func TestConditionTransitions(t *testing.T) {
	c := testConfig()
	n, _ := initialNode(&c, t0, Health{})
	f := func(at time.Duration, h Health, wantChanged bool, wantEvents ...string) {
		t.Helper()
		old := n.DeepCopy()
		events := setStatus(n, &c, t0.Add(at), h)
		if got := statusChanged(&old.Status, &n.Status); got != wantChanged {
			t.Fatalf("at %v: changed %v, want %v", at, got, wantChanged)
		}
		if !slices.Equal(events, wantEvents) {
			t.Fatalf("at %v: events %v, want %v", at, events, wantEvents)
		}
		for _, cond := range n.Status.Conditions {
			if !cond.LastHeartbeatTime.Time.Equal(t0.Add(at)) {
				t.Fatalf("at %v: %s heartbeat %v", at, cond.Type, cond.LastHeartbeatTime)
			}
		}
	}
	transition := func(typ v1.NodeConditionType) time.Time {
		return condition(t, n, typ).LastTransitionTime.Time
	}

	f(10*time.Second, Health{}, false)
	if !transition(v1.NodeReady).Equal(t0) {
		t.Fatalf("unchanged Ready moved its transition time to %v", transition(v1.NodeReady))
	}
	f(20*time.Second, Health{Ready: errors.New("container runtime is down")}, true, "NodeNotReady")
	ready := condition(t, n, v1.NodeReady)
	if ready.Status != v1.ConditionFalse || ready.Reason != "KubeletNotReady" || ready.Message != "container runtime is down" ||
		!ready.LastTransitionTime.Time.Equal(t0.Add(20*time.Second)) {
		t.Fatalf("not ready: %+v", ready)
	}
	// Still not ready, for another reason: the message follows, the
	// transition time stays.
	f(30*time.Second, Health{Ready: errors.New("PLEG is not healthy")}, true)
	if ready := condition(t, n, v1.NodeReady); ready.Message != "PLEG is not healthy" || !ready.LastTransitionTime.Time.Equal(t0.Add(20*time.Second)) {
		t.Fatalf("still not ready: %+v", ready)
	}
	f(40*time.Second, Health{Pressures: Pressures{Memory: true, PID: true}}, true, "NodeHasInsufficientMemory", "NodeHasInsufficientPID", "NodeReady")
	if mem := condition(t, n, v1.NodeMemoryPressure); mem.Status != v1.ConditionTrue || mem.Reason != "KubeletHasInsufficientMemory" ||
		!mem.LastTransitionTime.Time.Equal(t0.Add(40*time.Second)) {
		t.Fatalf("memory pressure %+v", mem)
	}
	if !transition(v1.NodeDiskPressure).Equal(t0) {
		t.Fatal("disk pressure moved without changing")
	}
	f(50*time.Second, Health{Pressures: Pressures{Memory: true, PID: true}}, false)
	f(60*time.Second, Health{}, true, "NodeHasSufficientMemory", "NodeHasSufficientPID")
}

func TestConditionsCorrectWhatOthersWrote(t *testing.T) {
	c := testConfig()
	n, _ := initialNode(&c, t0, Health{})
	// The node lifecycle controller marks a silent node Unknown; a node
	// problem detector adds a condition of its own.
	for i := range n.Status.Conditions {
		n.Status.Conditions[i].Status = v1.ConditionUnknown
		n.Status.Conditions[i].Reason = "NodeStatusUnknown"
	}
	n.Status.Conditions = append(n.Status.Conditions, v1.NodeCondition{Type: "KernelDeadlock", Status: v1.ConditionFalse})
	events := setStatus(n, &c, t0.Add(time.Minute), Health{})
	if len(events) != 4 || events[3] != "NodeReady" {
		t.Fatalf("events %v", events)
	}
	for _, typ := range []v1.NodeConditionType{v1.NodeMemoryPressure, v1.NodeDiskPressure, v1.NodePIDPressure} {
		if cond := condition(t, n, typ); cond.Status != v1.ConditionFalse || !strings.HasPrefix(cond.Reason, "Kubelet") {
			t.Fatalf("%s: %+v", typ, cond)
		}
	}
	if ready := condition(t, n, v1.NodeReady); ready.Status != v1.ConditionTrue || !ready.LastTransitionTime.Time.Equal(t0.Add(time.Minute)) {
		t.Fatalf("ready %+v", ready)
	}
	if cond := condition(t, n, "KernelDeadlock"); cond.Status != v1.ConditionFalse || len(n.Status.Conditions) != 5 {
		t.Fatalf("the other condition: %+v of %d", cond, len(n.Status.Conditions))
	}
}

func TestReadyNeedsCapacity(t *testing.T) {
	c := testConfig()
	delete(c.Capacity, v1.ResourcePods)
	delete(c.Capacity, v1.ResourceEphemeralStorage)
	n, _ := initialNode(&c, t0, Health{Ready: errors.New("runtime down")})
	ready := condition(t, n, v1.NodeReady)
	if ready.Status != v1.ConditionFalse || ready.Message != "runtime down; missing node capacity for resources: pods, ephemeral-storage" {
		t.Fatalf("ready %+v", ready)
	}
}

func TestReconcileExisting(t *testing.T) {
	c := testConfig()
	c.Labels = map[string]string{"example.com/pool": "new", "topology.kubernetes.io/zone": "z2"}
	initial, _ := initialNode(&c, t0, Health{})
	existing := &v1.Node{}
	existing.Name = "node-a"
	existing.Labels = map[string]string{
		"kubernetes.io/hostname": "old-host", "topology.kubernetes.io/zone": "z1",
		"example.com/pool": "old", "team": "x", "node-role.kubernetes.io/worker": "",
	}
	existing.Spec.Taints = []v1.Taint{{Key: "admin", Effect: v1.TaintEffectNoExecute}}
	if !reconcileExisting(existing, initial) {
		t.Fatal("nothing to reconcile")
	}
	want := map[string]string{
		"kubernetes.io/hostname": "node-a", "topology.kubernetes.io/zone": "z2",
		"kubernetes.io/os": goos, "kubernetes.io/arch": goarch, "beta.kubernetes.io/os": goos, "beta.kubernetes.io/arch": goarch,
		// Not owned: an administrator's labels, and --node-labels outside
		// the owned set, stay as they are.
		"example.com/pool": "old", "team": "x", "node-role.kubernetes.io/worker": "",
	}
	if !equality.Semantic.DeepEqual(existing.Labels, want) {
		t.Fatalf("labels %v\nwant %v", existing.Labels, want)
	}
	if len(existing.Spec.Taints) != 1 || existing.Spec.Taints[0].Key != "admin" {
		t.Fatalf("taints changed: %v", existing.Spec.Taints)
	}
	if !equality.Semantic.DeepEqual(existing.Status.Capacity, c.Capacity) {
		t.Fatalf("capacity %v", existing.Status.Capacity)
	}
	if reconcileExisting(existing, initial) {
		t.Fatal("a reconciled node needs reconciling again")
	}
}

// applyPatch is what the API server does with a status patch.
func applyPatch(t *testing.T, old *v1.Node, patch []byte) *v1.Node {
	t.Helper()
	oldJSON, _ := json.Marshal(old)
	out, err := strategicpatch.StrategicMergePatch(oldJSON, patch, v1.Node{})
	if err != nil {
		t.Fatalf("apply %s: %v", patch, err)
	}
	var n v1.Node
	if err := json.Unmarshal(out, &n); err != nil {
		t.Fatal(err)
	}
	return &n
}

func TestStatusPatch(t *testing.T) {
	c := testConfig()
	c.Addresses = Addresses([]string{"10.0.0.5", "10.0.0.6"}, "node-a")
	old, _ := initialNode(&c, t0, Health{})
	f := func(cur *v1.Node) {
		t.Helper()
		patch, err := statusPatch(old, cur)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(patch), `"spec"`) {
			t.Fatalf("the patch touches spec: %s", patch)
		}
		got := applyPatch(t, old, patch)
		if !equality.Semantic.DeepEqual(got.Status, cur.Status) || !equality.Semantic.DeepEqual(got.Labels, cur.Labels) {
			t.Fatalf("patch %s\nmakes %+v\nwant %+v", patch, got.Status, cur.Status)
		}
		if !equality.Semantic.DeepEqual(got.Spec, old.Spec) {
			t.Fatalf("spec changed to %+v", got.Spec)
		}
	}
	cur := old.DeepCopy()
	setStatus(cur, &c, t0.Add(time.Minute), Health{Ready: errors.New("down")})
	f(cur)

	// Two InternalIPs, one replaced or removed: a merge by type cannot
	// say it (removing one would remove both).
	for _, ips := range [][]string{{"10.0.0.7", "10.0.0.6"}, {"10.0.0.6"}, {"10.0.0.6", "10.0.0.5"}} {
		c.Addresses = Addresses(ips, "node-a")
		cur = old.DeepCopy()
		setStatus(cur, &c, t0.Add(time.Minute), Health{})
		f(cur)
	}

	// Someone changed the taints meanwhile: the patch still leaves them.
	cur = old.DeepCopy()
	cur.Spec.Taints = nil
	cur.Labels["kubernetes.io/os"] = "other"
	patch, _ := statusPatch(old, cur)
	if got := applyPatch(t, old, patch); len(got.Spec.Taints) != 1 || got.Labels["kubernetes.io/os"] != "other" {
		t.Fatalf("patch %s: taints %v labels %v", patch, got.Spec.Taints, got.Labels)
	}
}
