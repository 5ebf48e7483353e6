package node

import (
	"context"
	"errors"
	"slices"
	"testing"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestRegisterCreatesTheNode(t *testing.T) {
	f := newFixture(t, nil)
	if f.h.Registered() || f.h.NodeUID() != "" {
		t.Fatal("registered before trying")
	}
	if !f.h.register(context.Background()) {
		t.Fatal("register failed")
	}
	n := f.node()
	if !f.h.Registered() || f.h.NodeUID() != "uid-node-a" || f.h.Node().UID != "uid-node-a" {
		t.Fatalf("registered %v uid %q", f.h.Registered(), f.h.NodeUID())
	}
	if n.Labels["example.com/pool"] != "a" || n.Labels["kubernetes.io/hostname"] != "node-a" || n.Labels["kubernetes.io/os"] != goos {
		t.Fatalf("labels %v", n.Labels)
	}
	if len(n.Spec.Taints) != 1 || n.Spec.Taints[0].Key != "dedicated" {
		t.Fatalf("taints %v", n.Spec.Taints)
	}
	if ready := condition(t, n, v1.NodeReady); ready.Status != v1.ConditionTrue {
		t.Fatalf("ready %+v", ready)
	}
	if n.Status.NodeInfo.KubeletVersion != "v0.0.0-podline" || len(n.Status.Addresses) != 2 {
		t.Fatalf("status %+v", n.Status)
	}
	if ev := f.takeEvents(); !slices.Contains(ev, "NodeHasSufficientMemory") {
		t.Fatalf("events %v", ev)
	}
	// The create carried the status: nothing to write right after it.
	if err := f.h.syncStatus(context.Background()); err != nil {
		t.Fatal(err)
	}
	if p := f.count("patch", "nodes", "status"); p != 0 {
		t.Fatalf("%d status patches right after registration", p)
	}
}

func TestRegisterReconcilesAnExistingNode(t *testing.T) {
	existing := &v1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "node-a", UID: "uid-old", Labels: map[string]string{
			"kubernetes.io/hostname": "stale", "team": "x", "example.com/pool": "admin-set",
		}},
		Spec: v1.NodeSpec{Taints: []v1.Taint{{Key: "admin", Effect: v1.TaintEffectNoSchedule}}},
	}
	f := newFixture(t, nil, existing)
	if !f.h.register(context.Background()) {
		t.Fatal("register failed")
	}
	n := f.node()
	if f.h.NodeUID() != "uid-old" || n.UID != "uid-old" {
		t.Fatalf("uid %q, node %q", f.h.NodeUID(), n.UID)
	}
	want := map[string]string{"kubernetes.io/hostname": "node-a", "team": "x", "example.com/pool": "admin-set",
		"kubernetes.io/os": goos, "kubernetes.io/arch": goarch, "beta.kubernetes.io/os": goos, "beta.kubernetes.io/arch": goarch}
	for k, v := range want {
		if n.Labels[k] != v {
			t.Errorf("label %s = %q, want %q", k, n.Labels[k], v)
		}
	}
	if len(n.Spec.Taints) != 1 || n.Spec.Taints[0].Key != "admin" {
		t.Fatalf("taints %v", n.Spec.Taints)
	}
	if p := f.count("patch", "nodes", "status"); p != 1 {
		t.Fatalf("%d status patches, want 1", p)
	}
	// The status comes with the first check.
	if err := f.h.syncStatus(context.Background()); err != nil {
		t.Fatal(err)
	}
	if ready := condition(t, f.node(), v1.NodeReady); ready.Status != v1.ConditionTrue {
		t.Fatalf("ready %+v", ready)
	}
}

func TestRegisterForbiddenButPresent(t *testing.T) {
	c := testConfig()
	existing := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-a", UID: "u1", Labels: defaultLabels("node-a")},
		Status: v1.NodeStatus{Capacity: c.Capacity, Allocatable: c.Allocatable}}
	f := newFixture(t, nil, existing)
	gr := schema.GroupResource{Resource: "nodes"}
	f.failing("create", "nodes", 1, apierrors.NewForbidden(gr, "node-a", errors.New("no creating")))
	if !f.h.register(context.Background()) || f.h.NodeUID() != "u1" {
		t.Fatalf("registered %v uid %q", f.h.Registered(), f.h.NodeUID())
	}
	if p := f.count("patch", "nodes", "status"); p != 0 {
		t.Fatalf("%d patches of a node that needs none", p)
	}
}

func TestRegisterRetries(t *testing.T) {
	f := newFixture(t, nil)
	f.failing("create", "nodes", 3, apierrors.NewServiceUnavailable("starting"))
	before := registerErrors.Get()
	if !f.h.register(context.Background()) {
		t.Fatal("register failed")
	}
	if n := f.count("create", "nodes", ""); n != 4 {
		t.Fatalf("%d creates, want 4", n)
	}
	if d := registerErrors.Get() - before; d != 3 {
		t.Fatalf("%d errors counted, want 3", d)
	}
	f.node()

	// With the context gone it gives up.
	g := newFixture(t, nil)
	g.failing("create", "nodes", 1000, apierrors.NewServiceUnavailable("down"))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if g.h.register(ctx) || g.h.Registered() {
		t.Fatal("registered with a dead context")
	}
}
