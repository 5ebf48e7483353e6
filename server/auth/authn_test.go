package auth

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
)

// stubAuthn answers the same for every request.
type stubAuthn struct {
	user  *User
	ok    bool
	err   error
	calls int
}

func (s *stubAuthn) Authenticate(*http.Request) (*User, bool, error) {
	s.calls++
	return s.user, s.ok, s.err
}

func TestUnion(t *testing.T) {
	alice := &User{Name: "alice", Groups: []string{"devs"}}
	bad := errors.New("bad certificate")
	tests := []struct {
		name      string
		chain     []*stubAuthn
		anonymous bool
		wantUser  string
		wantGrps  []string
		wantErr   bool
	}{
		{name: "nothing, anonymous off", chain: []*stubAuthn{{}, {}}},
		{name: "nothing, anonymous on", chain: []*stubAuthn{{}, {}}, anonymous: true,
			wantUser: AnonymousUser, wantGrps: []string{UnauthenticatedGroup}},
		{name: "second wins", chain: []*stubAuthn{{}, {user: alice, ok: true}},
			wantUser: "alice", wantGrps: []string{"devs", AuthenticatedGroup}},
		{name: "failed credential is not anonymous", chain: []*stubAuthn{{err: bad}, {}}, anonymous: true, wantErr: true},
		{name: "a good credential beside a bad one", chain: []*stubAuthn{{err: bad}, {user: alice, ok: true}},
			wantUser: "alice", wantGrps: []string{"devs", AuthenticatedGroup}},
		{name: "already authenticated", chain: []*stubAuthn{{user: &User{Name: "x", Groups: []string{AuthenticatedGroup}}, ok: true}},
			wantUser: "x", wantGrps: []string{AuthenticatedGroup}},
		{name: "a credential naming the anonymous user", chain: []*stubAuthn{{user: &User{Name: AnonymousUser}, ok: true}},
			wantUser: AnonymousUser},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var chain []Authenticator
			for _, s := range tt.chain {
				chain = append(chain, s)
			}
			u, ok, err := Union(chain, tt.anonymous).Authenticate(httptest.NewRequest("GET", "/", nil))
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v", err)
			}
			if tt.wantUser == "" {
				if ok || u != nil {
					t.Fatalf("user %+v ok %v, want none", u, ok)
				}
				return
			}
			if !ok || u.Name != tt.wantUser || !slices.Equal(u.Groups, tt.wantGrps) {
				t.Fatalf("user %+v ok %v, want %s %v", u, ok, tt.wantUser, tt.wantGrps)
			}
		})
	}
	// The group is added to a copy: the authenticator's user is untouched.
	if !slices.Equal(alice.Groups, []string{"devs"}) {
		t.Fatalf("authenticator's user changed: %v", alice.Groups)
	}
}

func TestUnionStopsAtFirstUser(t *testing.T) {
	first := &stubAuthn{user: &User{Name: "a"}, ok: true}
	second := &stubAuthn{user: &User{Name: "b"}, ok: true}
	u, _, _ := Union([]Authenticator{first, second}, false).Authenticate(httptest.NewRequest("GET", "/", nil))
	if u.Name != "a" || second.calls != 0 {
		t.Fatalf("user %q, second asked %d times", u.Name, second.calls)
	}
}

func TestNewAuthenticatorBadCAFile(t *testing.T) {
	if _, err := NewAuthenticator(AuthnConfig{ClientCAFile: "/nonexistent/ca.crt"}); err == nil {
		t.Fatal("missing CA file accepted")
	}
}
