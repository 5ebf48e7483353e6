package auth

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// fakeTokenReviews answers TokenReviews by token: "good-*" are
// authenticated as user "sa-<token>", "fail" makes the API call fail,
// anything else is refused.
type fakeTokenReviews struct {
	calls     atomic.Int32
	audiences atomic.Value // []string of the last review
	// failures, when > 0, fails that many calls with a retriable error
	// before answering.
	failures atomic.Int32
	respAuds []string
}

func (f *fakeTokenReviews) clientset() *fake.Clientset {
	cs := fake.NewClientset()
	cs.PrependReactor("create", "tokenreviews", func(action k8stesting.Action) (bool, runtime.Object, error) {
		f.calls.Add(1)
		tr := action.(k8stesting.CreateAction).GetObject().(*authenticationv1.TokenReview).DeepCopy()
		f.audiences.Store(slices.Clone(tr.Spec.Audiences))
		if f.failures.Load() > 0 {
			f.failures.Add(-1)
			return true, nil, apierrors.NewServiceUnavailable("apiserver starting")
		}
		switch tok := tr.Spec.Token; {
		case tok == "fail":
			return true, nil, apierrors.NewForbidden(schema.GroupResource{Group: "authentication.k8s.io", Resource: "tokenreviews"}, "", errors.New("node may not review tokens"))
		case strings.HasPrefix(tok, "good-"):
			tr.Status = authenticationv1.TokenReviewStatus{
				Authenticated: true,
				Audiences:     f.respAuds,
				User: authenticationv1.UserInfo{
					Username: "sa-" + tok,
					UID:      "uid-" + tok,
					Groups:   []string{"system:serviceaccounts"},
					Extra:    map[string]authenticationv1.ExtraValue{"authentication.kubernetes.io/pod-name": {"web-0"}},
				},
			}
		default:
			tr.Status = authenticationv1.TokenReviewStatus{Authenticated: false, Error: "token expired"}
		}
		return true, tr, nil
	})
	return cs
}

func newTestTokenAuth(f *fakeTokenReviews, clock *fakeClock, opts TokenOptions) *TokenAuthenticator {
	opts.Now = clock.Now
	a := NewTokenAuthenticator(f.clientset().AuthenticationV1().TokenReviews(), opts)
	a.backoff = []time.Duration{0, 0, 0, 0}
	return a
}

func TestTokenAuthenticated(t *testing.T) {
	f := &fakeTokenReviews{}
	a := newTestTokenAuth(f, newFakeClock(), TokenOptions{CacheTTL: DefaultTokenCacheTTL})
	r := httptest.NewRequest("GET", "/pods", nil)
	r.Header.Set("Authorization", "Bearer good-1")
	u, ok, err := a.Authenticate(r)
	if err != nil || !ok {
		t.Fatalf("ok=%v err=%v", ok, err)
	}
	if u.Name != "sa-good-1" || u.UID != "uid-good-1" || !slices.Equal(u.Groups, []string{"system:serviceaccounts"}) || u.Extra["authentication.kubernetes.io/pod-name"][0] != "web-0" {
		t.Fatalf("user = %+v", u)
	}
	if auds := f.audiences.Load().([]string); len(auds) != 0 {
		t.Fatalf("audiences sent = %q, want none (the apiserver's own)", auds)
	}
}

func TestTokenCache(t *testing.T) {
	for _, tok := range []string{"good-1", "expired"} {
		t.Run(tok, func(t *testing.T) {
			f := &fakeTokenReviews{}
			clock := newFakeClock()
			a := newTestTokenAuth(f, clock, TokenOptions{CacheTTL: 2 * time.Minute})
			first := answer(a, tok)
			for range 3 {
				if got := answer(a, tok); got != first {
					t.Fatalf("cached answer %q differs from the first %q", got, first)
				}
			}
			if n := f.calls.Load(); n != 1 {
				t.Fatalf("%d TokenReviews for four uses within the TTL, want 1", n)
			}
			clock.Step(2*time.Minute - time.Second)
			answer(a, tok)
			if n := f.calls.Load(); n != 1 {
				t.Fatalf("%d TokenReviews just before the TTL, want 1", n)
			}
			clock.Step(time.Second)
			if got := answer(a, tok); got != first {
				t.Fatalf("answer after expiry %q, want %q", got, first)
			}
			if n := f.calls.Load(); n != 2 {
				t.Fatalf("%d TokenReviews after the TTL, want 2", n)
			}
		})
	}
}

// answer summarizes one authentication of token.
func answer(a *TokenAuthenticator, token string) string {
	u, ok, err := a.AuthenticateToken(context.Background(), token)
	switch {
	case err != nil:
		return "error: " + err.Error()
	case !ok:
		return "not ok"
	}
	return "user " + u.Name
}

func TestTokenRefusedIsAnError(t *testing.T) {
	a := newTestTokenAuth(&fakeTokenReviews{}, newFakeClock(), TokenOptions{CacheTTL: time.Minute})
	_, ok, err := a.AuthenticateToken(context.Background(), "expired")
	if ok || !errors.Is(err, ErrInvalidToken) || !strings.Contains(err.Error(), "token expired") {
		t.Fatalf("ok=%v err=%v, want ErrInvalidToken with the apiserver's reason", ok, err)
	}
}

func TestTokenAPIErrorNotCached(t *testing.T) {
	f := &fakeTokenReviews{}
	a := newTestTokenAuth(f, newFakeClock(), TokenOptions{CacheTTL: time.Minute})
	for range 2 {
		_, ok, err := a.AuthenticateToken(context.Background(), "fail")
		if ok || err == nil || errors.Is(err, ErrInvalidToken) || !apierrors.IsForbidden(err) {
			t.Fatalf("ok=%v err=%v, want the API's error", ok, err)
		}
	}
	// A 403 is not retried: two uses, two calls.
	if n := f.calls.Load(); n != 2 {
		t.Fatalf("%d TokenReviews, want 2 (errors are not cached nor 4xx retried)", n)
	}
}

func TestTokenRetriesPassingFailure(t *testing.T) {
	f := &fakeTokenReviews{}
	f.failures.Store(2)
	a := newTestTokenAuth(f, newFakeClock(), TokenOptions{CacheTTL: time.Minute})
	if got := answer(a, "good-2"); got != "user sa-good-2" {
		t.Fatalf("answer = %q", got)
	}
	if n := f.calls.Load(); n != 3 {
		t.Fatalf("%d calls, want 3 (two 503s, then the answer)", n)
	}
	f.failures.Store(100)
	if got := answer(a, "good-3"); !strings.Contains(got, "apiserver starting") {
		t.Fatalf("answer after retries run out = %q", got)
	}
}

func TestTokenZeroTTLDoesNotCache(t *testing.T) {
	f := &fakeTokenReviews{}
	a := newTestTokenAuth(f, newFakeClock(), TokenOptions{})
	answer(a, "good-1")
	answer(a, "good-1")
	if n := f.calls.Load(); n != 2 {
		t.Fatalf("%d calls with the cache off, want 2", n)
	}
}

func TestTokenCacheBounded(t *testing.T) {
	f := &fakeTokenReviews{}
	a := newTestTokenAuth(f, newFakeClock(), TokenOptions{CacheTTL: time.Hour, CacheSize: 3})
	for i := range 10 {
		answer(a, fmt.Sprintf("good-%d", i))
	}
	if n := a.cache.len(); n != 3 {
		t.Fatalf("cache holds %d entries, want its bound 3", n)
	}
	// The most recent are kept.
	before := f.calls.Load()
	answer(a, "good-9")
	if f.calls.Load() != before {
		t.Fatal("the most recent token was evicted")
	}
}

func TestTokenAudiences(t *testing.T) {
	f := &fakeTokenReviews{respAuds: []string{"https://kubernetes.default.svc"}}
	a := newTestTokenAuth(f, newFakeClock(), TokenOptions{CacheTTL: time.Minute, Audiences: []string{"podline"}})
	_, ok, err := a.AuthenticateToken(context.Background(), "good-1")
	if ok || !errors.Is(err, ErrInvalidToken) {
		t.Fatalf("token for another audience: ok=%v err=%v", ok, err)
	}
	if auds := f.audiences.Load().([]string); !slices.Equal(auds, []string{"podline"}) {
		t.Fatalf("audiences sent = %q", auds)
	}

	f = &fakeTokenReviews{respAuds: []string{"podline"}}
	a = newTestTokenAuth(f, newFakeClock(), TokenOptions{CacheTTL: time.Minute, Audiences: []string{"podline"}})
	if got := answer(a, "good-1"); got != "user sa-good-1" {
		t.Fatalf("token for podline: %q", got)
	}
}

func TestBearerToken(t *testing.T) {
	for header, want := range map[string]string{
		"":               "",
		"Bearer abc":     "abc",
		"bearer abc":     "abc",
		"BEARER abc":     "abc",
		"  Bearer abc  ": "abc",
		"Bearer abc def": "abc",
		"Bearer ":        "",
		"Bearer  abc":    "",
		"Basic YWxpY2U6": "",
		"Bearerabc":      "",
	} {
		r := httptest.NewRequest("GET", "/", nil)
		if header != "" {
			r.Header.Set("Authorization", header)
		}
		got, ok := bearerToken(r)
		if got != want || ok != (want != "") {
			t.Errorf("%q: token %q ok %v, want %q", header, got, ok, want)
		}
	}
}

func TestTokenCacheKeyHoldsNoToken(t *testing.T) {
	a := newTestTokenAuth(&fakeTokenReviews{}, newFakeClock(), TokenOptions{})
	b := newTestTokenAuth(&fakeTokenReviews{}, newFakeClock(), TokenOptions{})
	const tok = "good-secret-token-value"
	k := a.cacheKey(tok)
	if strings.Contains(string(k[:]), tok) || k != a.cacheKey(tok) {
		t.Fatal("key is not a stable hash of the token")
	}
	if k == b.cacheKey(tok) {
		t.Fatal("two authenticators hash alike: the key is not keyed with a secret of its own")
	}
}
