package auth

import (
	"context"
	"fmt"
	"time"

	authorizationv1client "k8s.io/client-go/kubernetes/typed/authorization/v1"
)

// Authorizer decides one question. allowed=false with a nil error is a
// refusal (or no opinion, which the node API treats the same); an error
// means no decision could be had.
type Authorizer interface {
	Authorize(ctx context.Context, a Attributes) (allowed bool, reason string, err error)
}

// AlwaysAllow allows every authenticated request (--authorization-mode=
// AlwaysAllow): fit for a node whose port only trusted callers reach.
type AlwaysAllow struct{}

// Authorize allows.
func (AlwaysAllow) Authorize(context.Context, Attributes) (bool, string, error) {
	return true, "", nil
}

// The kubelet's --authorization-mode values.
const (
	ModeAlwaysAllow = "AlwaysAllow"
	ModeWebhook     = "Webhook"
)

// AuthzConfig is the authorization half of the kubelet's flags.
type AuthzConfig struct {
	// Mode is ModeWebhook or ModeAlwaysAllow.
	Mode string
	// SubjectAccessReviews is the API the webhook mode asks.
	SubjectAccessReviews authorizationv1client.SubjectAccessReviewInterface
	// Webhook tunes the webhook mode (its TTLs are
	// --authorization-webhook-cache-{authorized,unauthorized}-ttl).
	Webhook WebhookOptions
}

// NewAuthorizer builds the authorizer c names.
func NewAuthorizer(c AuthzConfig) (Authorizer, error) {
	switch c.Mode {
	case ModeAlwaysAllow:
		return AlwaysAllow{}, nil
	case ModeWebhook:
		if c.SubjectAccessReviews == nil {
			return nil, fmt.Errorf("authorization mode %s needs an apiserver client", ModeWebhook)
		}
		return NewWebhookAuthorizer(c.SubjectAccessReviews, c.Webhook), nil
	}
	return nil, fmt.Errorf("authorization mode %q: want %s or %s", c.Mode, ModeWebhook, ModeAlwaysAllow)
}

// Defaults of the webhook authorizer.
const (
	// DefaultAuthorizedTTL is the kubelet's
	// --authorization-webhook-cache-authorized-ttl.
	DefaultAuthorizedTTL = 5 * time.Minute
	// DefaultUnauthorizedTTL is the kubelet's
	// --authorization-webhook-cache-unauthorized-ttl: short, so a newly
	// granted permission takes effect soon.
	DefaultUnauthorizedTTL = 30 * time.Second
	// DefaultAuthzCacheSize bounds the cached reviews: a few callers
	// times a few subresources and verbs.
	DefaultAuthzCacheSize = 8192
)
