package node

import (
	"context"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func (f *fixture) lease() *coordinationv1.Lease {
	f.t.Helper()
	l, err := f.client.CoordinationV1().Leases(LeaseNamespace).Get(context.Background(), "node-a", metav1.GetOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	return l
}

func (f *fixture) wantRenewed(at time.Time) {
	f.t.Helper()
	l := f.lease()
	if l.Spec.RenewTime == nil || !l.Spec.RenewTime.Time.Equal(at) {
		f.t.Fatalf("renewTime %v, want %v", l.Spec.RenewTime, at)
	}
}

func TestLeaseCreatedAndRenewed(t *testing.T) {
	f := newFixture(t, func(c *Config) { c.LeaseDuration = time.Minute })
	f.h.syncLease(context.Background())
	l := f.lease()
	if *l.Spec.HolderIdentity != "node-a" || *l.Spec.LeaseDurationSeconds != 60 || len(l.OwnerReferences) != 0 {
		t.Fatalf("lease %+v", l)
	}
	f.wantRenewed(t0)

	// Once the Node exists the lease is owned by it.
	if !f.h.register(context.Background()) {
		t.Fatal("register failed")
	}
	f.advance(15 * time.Second)
	f.h.syncLease(context.Background())
	f.wantRenewed(t0.Add(15 * time.Second))
	refs := f.lease().OwnerReferences
	if len(refs) != 1 || refs[0].Kind != "Node" || refs[0].APIVersion != "v1" || refs[0].Name != "node-a" || refs[0].UID != "uid-node-a" {
		t.Fatalf("owner references %+v", refs)
	}
	// Renewing costs one write from the copy it has: no read.
	gets := f.count("get", "leases", "")
	f.advance(15 * time.Second)
	f.h.syncLease(context.Background())
	f.wantRenewed(t0.Add(30 * time.Second))
	if g := f.count("get", "leases", ""); g != gets+1 { // +1: wantRenewed's own read
		t.Fatalf("%d lease reads for one renewal", g-gets-1)
	}
}

func TestLeaseConflict(t *testing.T) {
	f := newFixture(t, nil)
	f.h.syncLease(context.Background())
	f.failing("update", "leases", 1, apierrors.NewConflict(schema.GroupResource{Group: "coordination.k8s.io", Resource: "leases"}, "node-a", nil))
	gets := f.count("get", "leases", "")
	f.advance(10 * time.Second)
	f.h.syncLease(context.Background())
	f.wantRenewed(t0.Add(10 * time.Second))
	if u := f.count("update", "leases", ""); u != 2 {
		t.Fatalf("%d updates, want 2", u)
	}
	if g := f.count("get", "leases", "") - gets; g != 2 { // the re-read, and wantRenewed's
		t.Fatalf("%d reads after a conflict, want 1", g-1)
	}
}

func TestLeaseRecreated(t *testing.T) {
	f := newFixture(t, nil)
	f.h.syncLease(context.Background())
	if err := f.client.CoordinationV1().Leases(LeaseNamespace).Delete(context.Background(), "node-a", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	f.advance(10 * time.Second)
	f.h.syncLease(context.Background())
	f.wantRenewed(t0.Add(10 * time.Second))
	if c := f.count("create", "leases", ""); c != 2 {
		t.Fatalf("%d creates, want 2", c)
	}
}

func TestLeaseGivesUpWithContext(t *testing.T) {
	f := newFixture(t, nil)
	f.failing("get", "leases", 1000, apierrors.NewServiceUnavailable("down"))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	f.h.syncLease(ctx) // returns once ctx ends
	if ctx.Err() == nil || f.h.lease != nil {
		t.Fatalf("returned before ctx ended, or with a lease %v", f.h.lease)
	}
	if g := f.count("get", "leases", ""); g < 2 {
		t.Fatalf("%d reads: no retry", g)
	}
}
