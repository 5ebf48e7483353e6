package auth

import (
	"errors"
	"fmt"
	"net/http"
	"slices"

	authenticationv1client "k8s.io/client-go/kubernetes/typed/authentication/v1"
)

// Authenticator establishes who made a request. ok=false with a nil error
// means the request carries no credentials of this kind; an error means it
// carries some that are not good (or could not be checked).
type Authenticator interface {
	Authenticate(r *http.Request) (*User, bool, error)
}

// AuthnConfig is the authentication half of the kubelet's flags.
type AuthnConfig struct {
	// ClientCAFile (--client-ca-file) turns on client certificates.
	ClientCAFile string
	// ClientCA, when set, is used in its place: an authenticator whose
	// roots the caller reloads (NewClientCAFile).
	ClientCA *X509Authenticator
	// TokenReviews (--authentication-token-webhook) turns on bearer
	// tokens; nil leaves them out.
	TokenReviews authenticationv1client.TokenReviewInterface
	// Token tunes the token authenticator (its CacheTTL is
	// --authentication-token-webhook-cache-ttl).
	Token TokenOptions
	// Anonymous (--anonymous-auth) serves requests without credentials
	// as system:anonymous. Off unless asked for.
	Anonymous bool
}

// NewAuthenticator builds the chain the kubelet builds: client
// certificate, then bearer token, then (when enabled) anonymous.
func NewAuthenticator(c AuthnConfig) (Authenticator, error) {
	var chain []Authenticator
	switch {
	case c.ClientCA != nil:
		chain = append(chain, c.ClientCA)
	case c.ClientCAFile != "":
		roots, err := LoadClientCA(c.ClientCAFile)
		if err != nil {
			return nil, fmt.Errorf("x509 authentication: %w", err)
		}
		chain = append(chain, NewX509Authenticator(roots))
	}
	if c.TokenReviews != nil {
		chain = append(chain, NewTokenAuthenticator(c.TokenReviews, c.Token))
	}
	return Union(chain, c.Anonymous), nil
}

// Union tries each authenticator in turn; the first that finds a user
// wins, and the user gets group system:authenticated as the apiserver
// adds it. When none does, a request whose credentials were all absent is
// anonymous if anonymous is true; a request with a credential that failed
// is refused, never demoted to anonymous.
func Union(authns []Authenticator, anonymous bool) Authenticator {
	return &union{authns: slices.Clone(authns), anonymous: anonymous}
}

type union struct {
	authns    []Authenticator
	anonymous bool
}

func (u *union) Authenticate(r *http.Request) (*User, bool, error) {
	var errs []error
	for _, a := range u.authns {
		user, ok, err := a.Authenticate(r)
		if err != nil {
			// Another credential on the same request may still be good,
			// as the apiserver's union has it.
			errs = append(errs, err)
			continue
		}
		if ok && user == nil {
			errs = append(errs, fmt.Errorf("%T: authenticated without a user", a))
			continue
		}
		if ok {
			countAuthn(a)
			return withAuthenticatedGroup(user), true, nil
		}
	}
	if len(errs) > 0 {
		authnFailed.Inc()
		return nil, false, errors.Join(errs...)
	}
	if u.anonymous {
		authnAnonymous.Inc()
		return &User{Name: AnonymousUser, Groups: []string{UnauthenticatedGroup}}, true, nil
	}
	authnNone.Inc()
	return nil, false, nil
}

func countAuthn(a Authenticator) {
	switch a.(type) {
	case *X509Authenticator:
		authnX509.Inc()
	case *TokenAuthenticator:
		authnToken.Inc()
	default:
		authnOther.Inc()
	}
}

// withAuthenticatedGroup adds system:authenticated, except to the
// anonymous user and to users already in either built-in group, as the
// apiserver does: a certificate naming itself system:anonymous stays
// unauthenticated.
func withAuthenticatedGroup(u *User) *User {
	if u.Name == AnonymousUser || slices.Contains(u.Groups, AuthenticatedGroup) || slices.Contains(u.Groups, UnauthenticatedGroup) {
		return u
	}
	c := u.clone()
	c.Groups = append(c.Groups, AuthenticatedGroup)
	return c
}
