package auth

import "context"

// Names the apiserver gives to its built-in identities; RBAC rules refer
// to them, so they must be spelled exactly so.
const (
	// AnonymousUser is the user of a request with no credentials, when
	// anonymous access is enabled.
	AnonymousUser = "system:anonymous"
	// UnauthenticatedGroup is the group of the anonymous user.
	UnauthenticatedGroup = "system:unauthenticated"
	// AuthenticatedGroup is added to every user that presented valid
	// credentials.
	AuthenticatedGroup = "system:authenticated"
)

// User is who made a request, as an authenticator established it.
type User struct {
	Name   string
	UID    string
	Groups []string
	// Extra is what the credential carried besides (say, a service
	// account's pod, or a certificate's fingerprint); it is passed on to
	// the SubjectAccessReview.
	Extra map[string][]string
}

// clone copies u deeply enough that the copy's groups can be appended to
// without touching a cached original.
func (u *User) clone() *User {
	c := *u
	c.Groups = append([]string(nil), u.Groups...)
	if u.Extra != nil {
		c.Extra = make(map[string][]string, len(u.Extra))
		for k, v := range u.Extra {
			c.Extra[k] = append([]string(nil), v...)
		}
	}
	return &c
}

type userKey struct{}

// WithUser returns ctx carrying u, for the handlers behind Filter.
func WithUser(ctx context.Context, u *User) context.Context {
	return context.WithValue(ctx, userKey{}, u)
}

// UserFrom returns the user Filter authenticated, for logging and auditing
// in the handlers it wraps.
func UserFrom(ctx context.Context) (*User, bool) {
	u, ok := ctx.Value(userKey{}).(*User)
	return u, ok
}
