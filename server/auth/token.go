package auth

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	authenticationv1client "k8s.io/client-go/kubernetes/typed/authentication/v1"
)

// Defaults of the token authenticator.
const (
	// DefaultTokenCacheTTL is the kubelet's
	// --authentication-token-webhook-cache-ttl.
	DefaultTokenCacheTTL = 2 * time.Minute
	// DefaultTokenCacheSize bounds the cached reviews; a node sees a
	// handful of distinct callers, so this is room for churn, not need.
	DefaultTokenCacheSize = 4096
	// DefaultReviewTimeout caps one review, retries included, so a hung
	// apiserver cannot hold requests open.
	DefaultReviewTimeout = 10 * time.Second
)

// ErrInvalidToken is the class of a bearer token the apiserver did not
// accept. It is an error, not "no credentials", so that a bad token is
// never served as an anonymous request.
var ErrInvalidToken = errors.New("invalid bearer token")

// TokenOptions tune a TokenAuthenticator.
type TokenOptions struct {
	// CacheTTL is how long an answer, accepted or refused, is reused;
	// zero turns the cache off. The flag default is DefaultTokenCacheTTL.
	CacheTTL time.Duration
	// CacheSize bounds the cache; 0 means DefaultTokenCacheSize.
	CacheSize int
	// Audiences are sent in the TokenReview and required of the answer.
	// Empty, as the kubelet sends it, means the apiserver's own audiences.
	Audiences []string
	// Timeout caps one review; 0 means DefaultReviewTimeout.
	Timeout time.Duration
	// Now is the clock of the cache; nil means time.Now.
	Now func() time.Time
}

// TokenAuthenticator authenticates "Authorization: Bearer" tokens with the
// TokenReview API.
type TokenAuthenticator struct {
	client    authenticationv1client.TokenReviewInterface
	ttl       time.Duration
	audiences []string
	timeout   time.Duration
	now       func() time.Time
	backoff   []time.Duration
	// keyMAC keys the cache's hashes with a secret of this process, so
	// the cache holds nothing from which a token could be recovered or
	// checked offline.
	keyMAC []byte
	cache  *ttlCache[[sha256.Size]byte, tokenResult]
}

// tokenResult is one review's answer: a user, or why there is none.
type tokenResult struct {
	user   *User
	reason string
}

// NewTokenAuthenticator reviews tokens through client.
func NewTokenAuthenticator(client authenticationv1client.TokenReviewInterface, opts TokenOptions) *TokenAuthenticator {
	if opts.CacheSize <= 0 {
		opts.CacheSize = DefaultTokenCacheSize
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultReviewTimeout
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	key := make([]byte, 32)
	_, _ = rand.Read(key) // crypto/rand does not fail on Linux
	return &TokenAuthenticator{
		client:    client,
		ttl:       opts.CacheTTL,
		audiences: slices.Clone(opts.Audiences),
		timeout:   opts.Timeout,
		now:       opts.Now,
		backoff:   reviewBackoff,
		keyMAC:    key,
		cache:     newTTLCache[[sha256.Size]byte, tokenResult](opts.CacheSize),
	}
}

// Authenticate reads the bearer token of r; a request without one is not
// this authenticator's to judge.
func (a *TokenAuthenticator) Authenticate(r *http.Request) (*User, bool, error) {
	token, ok := bearerToken(r)
	if !ok {
		return nil, false, nil
	}
	return a.AuthenticateToken(r.Context(), token)
}

// bearerToken parses "Authorization: Bearer <token>", the scheme matched
// without regard to case as the apiserver does. An empty token is no
// token.
func bearerToken(r *http.Request) (string, bool) {
	h := strings.TrimSpace(r.Header.Get("Authorization"))
	scheme, token, found := strings.Cut(h, " ")
	if !found || !strings.EqualFold(scheme, "bearer") {
		return "", false
	}
	// A token never holds a space; what follows one is not part of it.
	token, _, _ = strings.Cut(token, " ")
	return token, token != ""
}

// AuthenticateToken reviews token, or reuses a review younger than the
// cache TTL. Answers are cached whether the token was accepted or not, so
// a caller retrying a bad token does not become load on the apiserver;
// failures to get an answer are not cached.
func (a *TokenAuthenticator) AuthenticateToken(ctx context.Context, token string) (*User, bool, error) {
	key := a.cacheKey(token)
	if res, ok := a.cache.get(key, a.now()); ok {
		tokenReviewCacheHits.Inc()
		return res.answer()
	}
	res, err := a.review(ctx, token)
	if err != nil {
		tokenReviewsError.Inc()
		return nil, false, err
	}
	if res.user != nil {
		tokenReviewsAuthenticated.Inc()
	} else {
		tokenReviewsUnauthenticated.Inc()
	}
	a.cache.add(key, res, a.ttl, a.now())
	return res.answer()
}

func (a *TokenAuthenticator) review(ctx context.Context, token string) (tokenResult, error) {
	ctx, cancel := context.WithTimeout(ctx, a.timeout)
	defer cancel()
	req := &authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: token, Audiences: a.audiences}}
	var resp *authenticationv1.TokenReview
	err := withRetry(ctx, a.backoff, func() error {
		var err error
		resp, err = a.client.Create(ctx, req, metav1.CreateOptions{})
		return err
	})
	if err != nil {
		return tokenResult{}, fmt.Errorf("token review: %w", err)
	}
	st := resp.Status
	if !st.Authenticated {
		return tokenResult{reason: st.Error}, nil
	}
	if len(a.audiences) > 0 && !slices.ContainsFunc(st.Audiences, func(aud string) bool { return slices.Contains(a.audiences, aud) }) {
		return tokenResult{reason: fmt.Sprintf("token audiences %q match none of %q", st.Audiences, a.audiences)}, nil
	}
	u := &User{Name: st.User.Username, UID: st.User.UID, Groups: slices.Clone(st.User.Groups)}
	if len(st.User.Extra) > 0 {
		u.Extra = make(map[string][]string, len(st.User.Extra))
		for k, v := range st.User.Extra {
			u.Extra[k] = slices.Clone([]string(v))
		}
	}
	return tokenResult{user: u}, nil
}

// answer turns a (possibly cached) result into Authenticate's values; the
// user is a copy, as callers add groups to it.
func (res tokenResult) answer() (*User, bool, error) {
	if res.user == nil {
		if res.reason == "" {
			return nil, false, ErrInvalidToken
		}
		return nil, false, fmt.Errorf("%w: %s", ErrInvalidToken, res.reason)
	}
	return res.user.clone(), true, nil
}

// cacheKey is a keyed hash of the token: the cache never holds a token.
// The audiences need no place in it, as they are fixed per authenticator.
func (a *TokenAuthenticator) cacheKey(token string) [sha256.Size]byte {
	m := hmac.New(sha256.New, a.keyMAC)
	m.Write([]byte(token))
	var k [sha256.Size]byte
	m.Sum(k[:0])
	return k
}
