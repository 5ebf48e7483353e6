package kubeapi

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

func TestPullSecretsShareReads(t *testing.T) {
	client := fake.NewClientset(&v1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "reg"},
		Type:       v1.SecretTypeDockerConfigJson,
		Data:       map[string][]byte{v1.DockerConfigJsonKey: []byte(`{"auths":{}}`)},
	})
	var gets atomic.Int32
	client.PrependReactor("get", "secrets", func(k8stesting.Action) (bool, runtime.Object, error) {
		gets.Add(1)
		time.Sleep(20 * time.Millisecond) // long enough for the others to find it in flight
		return false, nil, nil
	})
	now := time.Unix(1000, 0)
	var mu sync.Mutex
	p := NewPullSecrets(client)
	p.now = func() time.Time { mu.Lock(); defer mu.Unlock(); return now }

	var wg sync.WaitGroup
	for range 100 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := p.PullSecret(context.Background(), "ns", "reg")
			if err != nil || s.Type != v1.SecretTypeDockerConfigJson {
				t.Errorf("PullSecret = %v, %v", s, err)
			}
		}()
	}
	wg.Wait()
	if n := gets.Load(); n != 1 {
		t.Fatalf("100 pods read the secret with %d GETs, want 1", n)
	}
	mu.Lock()
	now = now.Add(pullSecretTTL)
	mu.Unlock()
	if _, err := p.PullSecret(context.Background(), "ns", "reg"); err != nil || gets.Load() != 2 {
		t.Fatalf("after the TTL: %v, %d GETs, want a second read", err, gets.Load())
	}

	// A missing secret is an error, and errors are not kept.
	for range 2 {
		if _, err := p.PullSecret(context.Background(), "ns", "missing"); !apierrors.IsNotFound(err) {
			t.Fatalf("missing secret: %v", err)
		}
	}
	if n := gets.Load(); n != 4 {
		t.Fatalf("%d GETs, want each failed read retried", n)
	}
}
