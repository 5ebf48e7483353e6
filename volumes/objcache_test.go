package volumes

import (
	"context"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

// Pods starting together read a shared object once; a missing object is
// remembered as missing for the same time, and read again after it.
func TestObjectReadsAreCoalesced(t *testing.T) {
	ctx := context.Background()
	cs := fake.NewClientset(&v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "kube-root-ca.crt"},
		Data: map[string]string{"ca.crt": "CA"}})
	s := startSource(t, cs, nil)
	clock := time.Now()
	var mu sync.Mutex
	s.reads.now = func() time.Time { mu.Lock(); defer mu.Unlock(); return clock }
	gets := func() int {
		n := 0
		for _, a := range cs.Actions() {
			if a.GetVerb() == "get" {
				n++
			}
		}
		return n
	}
	var wg sync.WaitGroup
	for range 50 {
		wg.Go(func() {
			data, found, err := s.ConfigMap(ctx, "shop", "kube-root-ca.crt", false)
			if err != nil || !found || string(data["ca.crt"]) != "CA" {
				t.Errorf("read: %v %v %v", data, found, err)
			}
		})
	}
	wg.Wait()
	if n := gets(); n != 1 {
		t.Fatalf("50 concurrent reads made %d GETs, want 1", n)
	}
	if _, found, err := s.ConfigMap(ctx, "shop", "later", true); found || err != nil {
		t.Fatalf("missing optional: %v %v", found, err)
	}
	if _, err := cs.CoreV1().ConfigMaps("shop").Create(ctx, &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "later"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, found, _ := s.ConfigMap(ctx, "shop", "later", true); found {
		t.Fatalf("a miss is remembered for %s", objectTTL)
	}
	mu.Lock()
	clock = clock.Add(objectTTL)
	mu.Unlock()
	if _, found, err := s.ConfigMap(ctx, "shop", "later", false); !found || err != nil {
		t.Fatalf("after %s the new configMap is read: %v %v", objectTTL, found, err)
	}
	if n := gets(); n != 3 {
		t.Fatalf("%d GETs, want 3 (ca once, later twice)", n)
	}
}
