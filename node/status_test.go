package node

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8stesting "k8s.io/client-go/testing"
)

// registered is a fixture whose node is registered at t0.
func registered(t *testing.T) *fixture {
	t.Helper()
	f := newFixture(t, nil)
	if !f.h.register(context.Background()) {
		t.Fatal("register failed")
	}
	f.takeEvents()
	return f
}

// check runs one status check at the fixture's clock and says whether it
// wrote the status.
func (f *fixture) check() bool {
	f.t.Helper()
	before := f.count("patch", "nodes", "status")
	if err := f.h.syncStatus(context.Background()); err != nil {
		f.t.Fatal(err)
	}
	return f.count("patch", "nodes", "status") > before
}

func TestStatusWrittenOnlyWhenChanged(t *testing.T) {
	f := registered(t)
	heartbeat := func() time.Time { return condition(t, f.node(), v1.NodeReady).LastHeartbeatTime.Time }

	f.advance(10 * time.Second)
	if f.check() {
		t.Fatal("unchanged status written")
	}
	if !heartbeat().Equal(t0) {
		t.Fatalf("heartbeat moved to %v without a write", heartbeat())
	}

	f.advance(10 * time.Second)
	f.setReady(errors.New("runtime down"))
	if !f.check() {
		t.Fatal("changed status not written")
	}
	ready := condition(t, f.node(), v1.NodeReady)
	if ready.Status != v1.ConditionFalse || ready.Message != "runtime down" ||
		!ready.LastTransitionTime.Time.Equal(t0.Add(20*time.Second)) || !heartbeat().Equal(t0.Add(20*time.Second)) {
		t.Fatalf("ready %+v", ready)
	}
	if ev := f.takeEvents(); !slices.Equal(ev, []string{"NodeNotReady"}) {
		t.Fatalf("events %v", ev)
	}
	// Other conditions did not change: their transition times stay.
	if mem := condition(t, f.node(), v1.NodeMemoryPressure); !mem.LastTransitionTime.Time.Equal(t0) {
		t.Fatalf("memory pressure %+v", mem)
	}

	f.advance(10 * time.Second)
	if f.check() {
		t.Fatal("unchanged not-ready status written")
	}
}

func TestStatusWrittenAfterReportPeriod(t *testing.T) {
	f := registered(t)
	for range 29 {
		f.advance(10 * time.Second)
		if f.check() {
			t.Fatalf("written at %v, before the report period", f.clock().Sub(t0))
		}
	}
	f.advance(10 * time.Second) // 5m since registration
	if !f.check() {
		t.Fatal("not written after the report period")
	}
	ready := condition(t, f.node(), v1.NodeReady)
	if !ready.LastHeartbeatTime.Time.Equal(t0.Add(5*time.Minute)) || !ready.LastTransitionTime.Time.Equal(t0) {
		t.Fatalf("ready %+v", ready)
	}
	if ev := f.takeEvents(); len(ev) != 0 {
		t.Fatalf("events for an unchanged status: %v", ev)
	}
	f.advance(10 * time.Second)
	if f.check() {
		t.Fatal("written again right after the report")
	}
}

func TestStatusReportJitter(t *testing.T) {
	f := registered(t)
	f.h.jitter = func() float64 { return 0.1 } // a change moves the next report 40% earlier
	f.advance(10 * time.Second)
	f.setReady(errors.New("down"))
	if !f.check() {
		t.Fatal("change not written")
	}
	f.advance(3*time.Minute - 1)
	if f.check() {
		t.Fatal("written before the jittered period")
	}
	f.advance(time.Second)
	if !f.check() {
		t.Fatal("not written at the jittered period (3m after the change)")
	}
	// A periodic write keeps the rhythm: the next is a full period later.
	f.advance(5*time.Minute - time.Second)
	if f.check() {
		t.Fatal("written before a full period")
	}
	f.advance(time.Second)
	if !f.check() {
		t.Fatal("not written a full period after")
	}
}

func TestStatusCorrectsOthers(t *testing.T) {
	f := registered(t)
	// The node lifecycle controller marked the node Unknown while podline
	// could not reach the API server, and someone dropped the OS label.
	n := f.node()
	for i := range n.Status.Conditions {
		n.Status.Conditions[i].Status = v1.ConditionUnknown
	}
	delete(n.Labels, "kubernetes.io/os")
	if _, err := f.client.CoreV1().Nodes().Update(context.Background(), n, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	f.advance(10 * time.Second)
	if !f.check() {
		t.Fatal("status not corrected")
	}
	n = f.node()
	if ready := condition(t, n, v1.NodeReady); ready.Status != v1.ConditionTrue || !ready.LastTransitionTime.Time.Equal(t0.Add(10*time.Second)) {
		t.Fatalf("ready %+v", ready)
	}
	if n.Labels["kubernetes.io/os"] != goos {
		t.Fatalf("labels %v", n.Labels)
	}
	if ev := f.takeEvents(); !slices.Contains(ev, "NodeReady") {
		t.Fatalf("events %v", ev)
	}
}

func TestStatusRetries(t *testing.T) {
	f := registered(t)
	f.setReady(errors.New("down"))
	f.failing("patch", "nodes", 2, apierrors.NewServiceUnavailable("busy"))
	if !f.check() {
		t.Fatal("not written")
	}
	if n := f.count("patch", "nodes", "status"); n != 3 {
		t.Fatalf("%d patches, want 3", n)
	}
	// The first try reads the API server's cache, the retries etcd.
	var rvs []string
	for _, a := range f.client.Actions() {
		if g, ok := a.(k8stesting.GetActionImpl); ok && g.GetResource().Resource == "nodes" && g.GetName() == "node-a" {
			rvs = append(rvs, g.GetGetOptions().ResourceVersion)
		}
	}
	if !slices.Equal(rvs, []string{"0", "", ""}) {
		t.Fatalf("gets with resourceVersion %q", rvs)
	}
	if ready := condition(t, f.node(), v1.NodeReady); ready.Status != v1.ConditionFalse {
		t.Fatalf("ready %+v", ready)
	}

	f.setReady(nil)
	f.failing("patch", "nodes", 1000, apierrors.NewServiceUnavailable("busy"))
	before := f.count("patch", "nodes", "status")
	if err := f.h.syncStatus(context.Background()); err == nil {
		t.Fatal("no error after every try failed")
	}
	if n := f.count("patch", "nodes", "status") - before; n != statusRetries {
		t.Fatalf("%d tries, want %d", n, statusRetries)
	}
	if ev := f.takeEvents(); slices.Contains(ev, "NodeReady") {
		t.Fatalf("event for a status never written: %v", ev)
	}
}

func TestStatusPrefersWhatItWrote(t *testing.T) {
	f := newFixture(t, nil)
	mine := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-a", UID: "u", ResourceVersion: "10"}}
	f.h.node.Store(mine)
	f2 := func(got *v1.Node, want *v1.Node) {
		t.Helper()
		if n := f.h.newest(got); n != want {
			t.Fatalf("newest(rv %s) = rv %s, want %s", got.ResourceVersion, n.ResourceVersion, want.ResourceVersion)
		}
	}
	stale := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-a", UID: "u", ResourceVersion: "9"}}
	f2(stale, mine)
	fresh := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-a", UID: "u", ResourceVersion: "11"}}
	f2(fresh, fresh)
	if f.h.Node() != fresh {
		t.Fatal("the fresh node was not kept")
	}
	recreated := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-a", UID: "other", ResourceVersion: "5"}}
	f2(recreated, recreated)
}

func TestStatusWithoutRegistering(t *testing.T) {
	f := newFixture(t, func(c *Config) { c.Register = false })
	if err := f.h.syncStatus(context.Background()); !apierrors.IsNotFound(err) {
		t.Fatalf("status of a missing node: %v", err)
	}
	if f.h.Registered() || f.count("create", "nodes", "") != 0 {
		t.Fatal("created the node without Register")
	}
	if _, err := f.client.CoreV1().Nodes().Create(context.Background(), &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-a"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if !f.check() || !f.h.Registered() {
		t.Fatal("status of an administrator's node not written")
	}
	if n := f.node(); condition(t, n, v1.NodeReady).Status != v1.ConditionTrue || len(n.Spec.Taints) != 0 {
		t.Fatalf("node %+v", n)
	}
}
