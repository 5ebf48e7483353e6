package auth

import (
	"context"
	"errors"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"

	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// fakeAccessReviews allows the subresources in allow and records each
// review it was asked.
type fakeAccessReviews struct {
	mu      sync.Mutex
	allow   map[string]bool
	fail    map[string]bool
	asked   []authorizationv1.SubjectAccessReviewSpec
	reason  string
	denyAll bool
}

func (f *fakeAccessReviews) clientset() *fake.Clientset {
	cs := fake.NewClientset()
	cs.PrependReactor("create", "subjectaccessreviews", func(action k8stesting.Action) (bool, runtime.Object, error) {
		sar := action.(k8stesting.CreateAction).GetObject().(*authorizationv1.SubjectAccessReview).DeepCopy()
		f.mu.Lock()
		defer f.mu.Unlock()
		f.asked = append(f.asked, sar.Spec)
		sub := sar.Spec.ResourceAttributes.Subresource
		if f.fail[sub] {
			return true, nil, apierrors.NewInternalError(errBoom)
		}
		sar.Status.Allowed = f.allow[sub]
		sar.Status.Denied = f.denyAll
		sar.Status.Reason = f.reason
		return true, sar, nil
	})
	return cs
}

// askedSubresources are the subresources reviewed so far, in order.
func (f *fakeAccessReviews) askedSubresources() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var subs []string
	for _, s := range f.asked {
		subs = append(subs, s.ResourceAttributes.Subresource)
	}
	return subs
}

var errBoom = errors.New("etcd is on fire")

func newTestWebhook(f *fakeAccessReviews, clock *fakeClock) *WebhookAuthorizer {
	w := NewWebhookAuthorizer(f.clientset().AuthorizationV1().SubjectAccessReviews(), WebhookOptions{
		AuthorizedTTL:   DefaultAuthorizedTTL,
		UnauthorizedTTL: DefaultUnauthorizedTTL,
		Now:             clock.Now,
	})
	w.backoff = nil
	return w
}

func TestWebhookReviewSpec(t *testing.T) {
	f := &fakeAccessReviews{allow: map[string]bool{"stats": true}}
	w := newTestWebhook(f, newFakeClock())
	u := &User{Name: "alice", UID: "u-1", Groups: []string{"devs", AuthenticatedGroup}, Extra: map[string][]string{"scopes": {"a", "b"}}}
	r := httptest.NewRequest("GET", "/stats/summary", nil)
	ok, _, err := w.Authorize(context.Background(), RequestAttributes(u, r, "node-1")[0])
	if err != nil || !ok {
		t.Fatalf("ok=%v err=%v", ok, err)
	}
	got := f.asked[0]
	want := authorizationv1.SubjectAccessReviewSpec{
		ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: "get", Version: "v1", Resource: "nodes", Subresource: "stats", Name: "node-1"},
		User:               "alice",
		UID:                "u-1",
		Groups:             []string{"devs", AuthenticatedGroup},
		Extra:              map[string]authorizationv1.ExtraValue{"scopes": {"a", "b"}},
	}
	if *got.ResourceAttributes != *want.ResourceAttributes || got.User != want.User || got.UID != want.UID ||
		!slices.Equal(got.Groups, want.Groups) || !slices.Equal(got.Extra["scopes"], want.Extra["scopes"]) || len(got.Extra) != 1 {
		t.Fatalf("review spec = %+v %+v\nwant %+v %+v", got, got.ResourceAttributes, want, want.ResourceAttributes)
	}
}

func TestWebhookFallbackOrderAndCache(t *testing.T) {
	// Granted only nodes/proxy, as a caller of the coarse scheme is.
	f := &fakeAccessReviews{allow: map[string]bool{"proxy": true}}
	clock := newFakeClock()
	w := newTestWebhook(f, clock)
	u := &User{Name: "prometheus", Groups: []string{AuthenticatedGroup}}
	r := httptest.NewRequest("GET", "/pods", nil)
	attrs := RequestAttributes(u, r, "node-1")

	allowed, _, err := decide(r, w, attrs)
	if err != nil || !allowed {
		t.Fatalf("allowed=%v err=%v, want allowed through the proxy fallback", allowed, err)
	}
	if got := f.askedSubresources(); !slices.Equal(got, []string{"pods", "proxy"}) {
		t.Fatalf("asked %v, want [pods proxy] in that order", got)
	}

	// Both answers are cached: no further review.
	if allowed, _, err := decide(r, w, attrs); err != nil || !allowed {
		t.Fatalf("second request: allowed=%v err=%v", allowed, err)
	}
	if n := len(f.askedSubresources()); n != 2 {
		t.Fatalf("%d reviews after a repeat, want 2", n)
	}

	// The refusal of pods expires after 30s, the grant of proxy after 5m.
	clock.Step(DefaultUnauthorizedTTL)
	decide(r, w, attrs)
	if got := f.askedSubresources(); !slices.Equal(got, []string{"pods", "proxy", "pods"}) {
		t.Fatalf("asked %v after 30s, want pods asked again and proxy cached", got)
	}
	clock.Step(DefaultAuthorizedTTL)
	decide(r, w, attrs)
	if got := f.askedSubresources(); !slices.Equal(got, []string{"pods", "proxy", "pods", "pods", "proxy"}) {
		t.Fatalf("asked %v after 5m, want both asked again", got)
	}
}

func TestWebhookSpecificGrantStopsEarly(t *testing.T) {
	f := &fakeAccessReviews{allow: map[string]bool{"healthz": true}}
	w := newTestWebhook(f, newFakeClock())
	r := httptest.NewRequest("GET", "/healthz", nil)
	if allowed, _, err := decide(r, w, RequestAttributes(&User{Name: "lb"}, r, "n")); err != nil || !allowed {
		t.Fatalf("allowed=%v err=%v", allowed, err)
	}
	if got := f.askedSubresources(); !slices.Equal(got, []string{"healthz"}) {
		t.Fatalf("asked %v, want only healthz: proxy is not asked once healthz is granted", got)
	}
}

func TestWebhookDistinctUsersNotShared(t *testing.T) {
	f := &fakeAccessReviews{allow: map[string]bool{"stats": true}}
	w := newTestWebhook(f, newFakeClock())
	r := httptest.NewRequest("GET", "/stats/summary", nil)
	for _, u := range []*User{{Name: "a"}, {Name: "b"}, {Name: "a", Groups: []string{"g"}}} {
		w.Authorize(context.Background(), RequestAttributes(u, r, "n")[0])
	}
	if n := len(f.askedSubresources()); n != 3 {
		t.Fatalf("%d reviews for three distinct users, want 3", n)
	}
}

func TestWebhookErrors(t *testing.T) {
	f := &fakeAccessReviews{fail: map[string]bool{"stats": true}}
	w := newTestWebhook(f, newFakeClock())
	r := httptest.NewRequest("GET", "/stats/summary", nil)
	a := RequestAttributes(&User{Name: "a"}, r, "n")[0]
	for range 2 {
		if ok, _, err := w.Authorize(context.Background(), a); ok || err == nil {
			t.Fatalf("ok=%v err=%v, want the API's error", ok, err)
		}
	}
	if n := len(f.askedSubresources()); n != 2 {
		t.Fatalf("%d reviews, want 2: an error is not cached", n)
	}

	both := &fakeAccessReviews{allow: map[string]bool{"stats": true}, denyAll: true}
	if ok, _, err := newTestWebhook(both, newFakeClock()).Authorize(context.Background(), a); ok || err == nil {
		t.Fatalf("allowed and denied at once: ok=%v err=%v, want an error", ok, err)
	}
}

func TestWebhookZeroTTLDoesNotCache(t *testing.T) {
	f := &fakeAccessReviews{allow: map[string]bool{"stats": true}}
	w := NewWebhookAuthorizer(f.clientset().AuthorizationV1().SubjectAccessReviews(), WebhookOptions{})
	r := httptest.NewRequest("GET", "/stats/summary", nil)
	a := RequestAttributes(&User{Name: "a"}, r, "n")[0]
	w.Authorize(context.Background(), a)
	w.Authorize(context.Background(), a)
	if n := len(f.askedSubresources()); n != 2 {
		t.Fatalf("%d reviews with TTLs of zero, want 2", n)
	}
}

func TestNewAuthorizer(t *testing.T) {
	if a, err := NewAuthorizer(AuthzConfig{Mode: ModeAlwaysAllow}); err != nil {
		t.Fatal(err)
	} else if ok, _, _ := a.Authorize(context.Background(), Attributes{}); !ok {
		t.Fatal("AlwaysAllow refused")
	}
	if _, err := NewAuthorizer(AuthzConfig{Mode: ModeWebhook}); err == nil {
		t.Fatal("webhook without a client accepted")
	}
	if _, err := NewAuthorizer(AuthzConfig{Mode: "RBAC"}); err == nil {
		t.Fatal("unknown mode accepted")
	}
	f := &fakeAccessReviews{}
	if a, err := NewAuthorizer(AuthzConfig{Mode: ModeWebhook, SubjectAccessReviews: f.clientset().AuthorizationV1().SubjectAccessReviews()}); err != nil {
		t.Fatal(err)
	} else if _, ok := a.(*WebhookAuthorizer); !ok {
		t.Fatalf("webhook mode built %T", a)
	}
}
