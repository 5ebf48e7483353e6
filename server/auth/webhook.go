package auth

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	authorizationv1client "k8s.io/client-go/kubernetes/typed/authorization/v1"
)

// WebhookOptions tune a WebhookAuthorizer. A TTL of zero caches nothing
// of that kind; the flag defaults are DefaultAuthorizedTTL and
// DefaultUnauthorizedTTL.
type WebhookOptions struct {
	AuthorizedTTL   time.Duration
	UnauthorizedTTL time.Duration
	// CacheSize bounds the cache; 0 means DefaultAuthzCacheSize.
	CacheSize int
	// Timeout caps one review; 0 means DefaultReviewTimeout.
	Timeout time.Duration
	// Now is the clock of the cache; nil means time.Now.
	Now func() time.Time
}

// WebhookAuthorizer asks the apiserver with a SubjectAccessReview
// (--authorization-mode=Webhook), so the cluster's RBAC decides.
type WebhookAuthorizer struct {
	client  authorizationv1client.SubjectAccessReviewInterface
	opts    WebhookOptions
	backoff []time.Duration
	cache   *ttlCache[[sha256.Size]byte, authorizationv1.SubjectAccessReviewStatus]
}

// NewWebhookAuthorizer asks through client.
func NewWebhookAuthorizer(client authorizationv1client.SubjectAccessReviewInterface, opts WebhookOptions) *WebhookAuthorizer {
	if opts.CacheSize <= 0 {
		opts.CacheSize = DefaultAuthzCacheSize
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultReviewTimeout
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &WebhookAuthorizer{
		client:  client,
		opts:    opts,
		backoff: reviewBackoff,
		cache:   newTTLCache[[sha256.Size]byte, authorizationv1.SubjectAccessReviewStatus](opts.CacheSize),
	}
}

// Authorize asks about a, or reuses an answer to the same question (same
// user, groups, extra, verb and subresource) younger than its TTL.
// Failures to get an answer are not cached.
func (w *WebhookAuthorizer) Authorize(ctx context.Context, a Attributes) (bool, string, error) {
	spec := reviewSpec(a)
	key, err := specKey(spec)
	if err != nil {
		return false, "", err
	}
	st, ok := w.cache.get(key, w.opts.Now())
	if ok {
		accessReviewCacheHits.Inc()
	} else {
		st, err = w.review(ctx, spec)
		if err != nil {
			accessReviewsError.Inc()
			return false, "", err
		}
		ttl := w.opts.UnauthorizedTTL
		if st.Allowed {
			accessReviewsAllowed.Inc()
			ttl = w.opts.AuthorizedTTL
		} else {
			accessReviewsDenied.Inc()
		}
		w.cache.add(key, st, ttl, w.opts.Now())
	}
	if st.Allowed && st.Denied {
		return false, st.Reason, fmt.Errorf("subject access review for %s/%s: both allowed and denied", a.Resource, a.Subresource)
	}
	return st.Allowed, st.Reason, nil
}

func (w *WebhookAuthorizer) review(ctx context.Context, spec authorizationv1.SubjectAccessReviewSpec) (authorizationv1.SubjectAccessReviewStatus, error) {
	ctx, cancel := context.WithTimeout(ctx, w.opts.Timeout)
	defer cancel()
	req := &authorizationv1.SubjectAccessReview{Spec: spec}
	var resp *authorizationv1.SubjectAccessReview
	err := withRetry(ctx, w.backoff, func() error {
		var err error
		resp, err = w.client.Create(ctx, req, metav1.CreateOptions{})
		return err
	})
	if err != nil {
		return authorizationv1.SubjectAccessReviewStatus{}, fmt.Errorf("subject access review (verb %s, %s/%s): %w", spec.ResourceAttributes.Verb, spec.ResourceAttributes.Resource, spec.ResourceAttributes.Subresource, err)
	}
	return resp.Status, nil
}

// reviewSpec is the question as the apiserver takes it.
func reviewSpec(a Attributes) authorizationv1.SubjectAccessReviewSpec {
	spec := authorizationv1.SubjectAccessReviewSpec{
		ResourceAttributes: &authorizationv1.ResourceAttributes{
			Namespace:   a.Namespace,
			Verb:        a.Verb,
			Group:       a.APIGroup,
			Version:     a.APIVersion,
			Resource:    a.Resource,
			Subresource: a.Subresource,
			Name:        a.Name,
		},
	}
	if u := a.User; u != nil {
		spec.User, spec.UID, spec.Groups = u.Name, u.UID, u.Groups
		if len(u.Extra) > 0 {
			spec.Extra = make(map[string]authorizationv1.ExtraValue, len(u.Extra))
			for k, v := range u.Extra {
				spec.Extra[k] = authorizationv1.ExtraValue(v)
			}
		}
	}
	return spec
}

// specKey identifies a question by all it says: json.Marshal sorts map
// keys, so equal questions hash alike.
func specKey(spec authorizationv1.SubjectAccessReviewSpec) ([sha256.Size]byte, error) {
	b, err := json.Marshal(spec)
	if err != nil {
		return [sha256.Size]byte{}, fmt.Errorf("subject access review cache key: %w", err)
	}
	return sha256.Sum256(b), nil
}
