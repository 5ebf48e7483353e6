package kubeapi

import (
	"context"
	"fmt"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// pullSecretTTL is how long one read of an image pull secret serves other
// pods. The secret is read only when a pull is due; a burst of pods of one
// image and secret (a Deployment scaled up) then costs one GET, not one
// per pod under the node's API rate limit, and a pod never pulls with
// credentials older than this.
const pullSecretTTL = 5 * time.Second

// PullSecrets reads the secrets pods name in imagePullSecrets (the Node
// authorizer lets a node read those of its pods), for the containers
// stage. Reads of one secret within pullSecretTTL, or while one is in
// flight, share it; errors are never reused.
type PullSecrets struct {
	client kubernetes.Interface
	now    func() time.Time

	mu    sync.Mutex
	reads map[pullSecretKey]*pullSecretRead
}

type pullSecretKey struct{ namespace, name string }

type pullSecretRead struct {
	done   chan struct{}
	at     time.Time
	secret *v1.Secret // shared: read only
	err    error
}

// NewPullSecrets reads through client.
func NewPullSecrets(client kubernetes.Interface) *PullSecrets {
	return &PullSecrets{client: client, now: time.Now, reads: make(map[pullSecretKey]*pullSecretRead)}
}

// PullSecret returns the secret; the caller must not modify it.
func (p *PullSecrets) PullSecret(ctx context.Context, namespace, name string) (*v1.Secret, error) {
	key := pullSecretKey{namespace, name}
	p.mu.Lock()
	r := p.reads[key]
	if r != nil && !p.fresh(r) {
		r = nil
	}
	if r != nil {
		p.mu.Unlock()
		select {
		case <-r.done:
			return r.secret, r.err
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	r = &pullSecretRead{done: make(chan struct{})}
	p.pruneLocked()
	p.reads[key] = r
	p.mu.Unlock()

	r.secret, r.err = p.client.CoreV1().Secrets(namespace).Get(ctx, name, metav1.GetOptions{})
	if r.err != nil {
		r.secret, r.err = nil, fmt.Errorf("get secret %q in namespace %q: %w", name, namespace, r.err)
	}
	p.mu.Lock()
	r.at = p.now()
	if r.err != nil && p.reads[key] == r {
		delete(p.reads, key)
	}
	p.mu.Unlock()
	close(r.done)
	return r.secret, r.err
}

// fresh: in flight, or answered within the TTL. Called with mu.
func (p *PullSecrets) fresh(r *pullSecretRead) bool {
	select {
	case <-r.done:
		return p.now().Sub(r.at) < pullSecretTTL
	default:
		return true
	}
}

// pruneLocked drops expired reads, so the map follows the secrets in use
// in the last few seconds, not every secret ever read.
func (p *PullSecrets) pruneLocked() {
	for k, r := range p.reads {
		if !p.fresh(r) {
			delete(p.reads, k)
		}
	}
}
