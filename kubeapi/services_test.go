package kubeapi

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

func TestServicesListsTheNamespaceAndTheAPIServer(t *testing.T) {
	svc := func(ns, name string) *v1.Service {
		return &v1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: v1.ServiceSpec{ClusterIP: "10.96.0.5"}}
	}
	client := fake.NewClientset(svc("default", "kubernetes"), svc("web", "db"), svc("other", "x"))
	s := NewServices(client)
	if _, err := s.Services("web"); !errors.Is(err, ErrServicesNotSynced) {
		t.Fatalf("before the first list: %v, want ErrServicesNotSynced", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go s.Run(ctx)
	names := func(ns string) []string {
		t.Helper()
		list, err := s.Services(ns)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, x := range list {
			out = append(out, x.Namespace+"/"+x.Name)
		}
		slices.Sort(out)
		return out
	}
	deadline := time.Now().Add(5 * time.Second)
	for !s.informer.HasSynced() {
		if time.Now().After(deadline) {
			t.Fatal("informer never synced")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if got := names("web"); !slices.Equal(got, []string{"default/kubernetes", "web/db"}) {
		t.Errorf("web: %v", got)
	}
	if got := names("default"); !slices.Equal(got, []string{"default/kubernetes"}) {
		t.Errorf("default: %v", got)
	}
}
