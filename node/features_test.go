package node

import (
	"context"
	"slices"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	k8stesting "k8s.io/client-go/testing"
)

func TestNodeDeclaresWebSocketStreams(t *testing.T) {
	f := registered(t)
	if got := f.node().Status.DeclaredFeatures; !slices.Equal(got, []string{"ExtendWebSocketsToKubelet"}) {
		t.Fatalf("declared features at registration %v", got)
	}
	// A Node someone else registered, or an older podline, gets them at
	// the first check.
	n := f.node()
	n.Status.DeclaredFeatures = nil
	if _, err := f.client.CoreV1().Nodes().UpdateStatus(context.Background(), n, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	f.advance(10 * time.Second)
	if !f.check() {
		t.Fatal("missing declared features not written")
	}
	if got := f.node().Status.DeclaredFeatures; !slices.Equal(got, []string{"ExtendWebSocketsToKubelet"}) {
		t.Fatalf("declared features after the check %v", got)
	}
}

// An API server with NodeDeclaredFeatures off drops the field from every
// write: podline notices once and does not write every update period to
// put it back.
func TestDeclaredFeaturesDroppedByTheAPIServer(t *testing.T) {
	f := newFixture(t, nil)
	dropping := true
	strip := func(a k8stesting.Action) (bool, runtime.Object, error) {
		if !dropping {
			return false, nil, nil
		}
		handled, obj, err := k8stesting.ObjectReaction(f.client.Tracker())(a)
		if err != nil || obj == nil {
			return handled, obj, err
		}
		n := obj.(*v1.Node).DeepCopy()
		n.Status.DeclaredFeatures = nil
		if err := f.client.Tracker().Update(v1.SchemeGroupVersion.WithResource("nodes"), n, ""); err != nil {
			return true, nil, err
		}
		return true, n, nil
	}
	f.client.PrependReactor("create", "nodes", strip)
	f.client.PrependReactor("patch", "nodes", strip)
	if !f.h.register(context.Background()) {
		t.Fatal("register failed")
	}
	f.advance(10 * time.Second)
	f.check() // may write once, and learn the field is dropped
	for range 3 {
		f.advance(10 * time.Second)
		if f.check() {
			t.Fatal("an unchanged status written again because the API server drops declaredFeatures")
		}
	}
	if got := f.node().Status.DeclaredFeatures; got != nil {
		t.Fatalf("the fake API server kept %v", got)
	}

	// The API server turns the field on: the next periodic write offers
	// the features again, and they stay.
	dropping = false
	f.advance(f.h.cfg.ReportFrequency)
	if !f.check() {
		t.Fatal("no periodic write")
	}
	if got := f.node().Status.DeclaredFeatures; !slices.Equal(got, []string{"ExtendWebSocketsToKubelet"}) {
		t.Fatalf("declared features once the API server keeps them: %v", got)
	}
	f.advance(10 * time.Second)
	if f.check() {
		t.Fatal("an unchanged status written after the features were kept")
	}
}
