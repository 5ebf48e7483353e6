package auth

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// fixture is the whole port: certificates of a CA, tokens through a fake
// TokenReview, decisions through a fake SubjectAccessReview.
type fixture struct {
	ca     *testCA
	tokens *fakeTokenReviews
	access *fakeAccessReviews
	// seen is the user and Authorization header the wrapped handler got.
	seen     *User
	seenAuth string
}

func newFixture(t *testing.T) *fixture {
	f := &fixture{ca: newCA(t, "cluster-ca"), tokens: &fakeTokenReviews{}, access: &fakeAccessReviews{allow: map[string]bool{}}}
	return f
}

func (f *fixture) handler(t *testing.T, anonymous bool) http.Handler {
	t.Helper()
	caFile := filepath.Join(t.TempDir(), "ca.crt")
	if err := os.WriteFile(caFile, f.ca.pem(), 0o600); err != nil {
		t.Fatal(err)
	}
	authn, err := NewAuthenticator(AuthnConfig{
		ClientCAFile: caFile,
		TokenReviews: f.tokens.clientset().AuthenticationV1().TokenReviews(),
		Token:        TokenOptions{CacheTTL: DefaultTokenCacheTTL},
		Anonymous:    anonymous,
	})
	if err != nil {
		t.Fatal(err)
	}
	authz, err := NewAuthorizer(AuthzConfig{
		Mode:                 ModeWebhook,
		SubjectAccessReviews: f.access.clientset().AuthorizationV1().SubjectAccessReviews(),
		Webhook:              WebhookOptions{AuthorizedTTL: DefaultAuthorizedTTL, UnauthorizedTTL: DefaultUnauthorizedTTL},
	})
	if err != nil {
		t.Fatal(err)
	}
	authz.(*WebhookAuthorizer).backoff = nil
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.seen, _ = UserFrom(r.Context())
		f.seenAuth = r.Header.Get("Authorization")
		io.WriteString(w, "ok")
	})
	return Filter(next, authn, authz, "node-1", slog.New(slog.NewTextHandler(io.Discard, nil)))
}

func serve(h http.Handler, method, path, token string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, path, nil)
	if token != "" {
		r.Header.Set("Authorization", "Bearer "+token)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

func TestFilterAnonymousOff(t *testing.T) {
	f := newFixture(t)
	f.access.allow["pods"] = true
	h := f.handler(t, false)
	w := serve(h, "GET", "/pods", "")
	if w.Code != http.StatusUnauthorized || w.Body.String() != "Unauthorized\n" {
		t.Fatalf("no credentials: %d %q, want 401 Unauthorized", w.Code, w.Body.String())
	}
	if f.seen != nil || len(f.access.askedSubresources()) != 0 {
		t.Fatal("an unauthenticated request went past authentication")
	}
}

func TestFilterAnonymousOnForbidden(t *testing.T) {
	f := newFixture(t)
	h := f.handler(t, true)
	w := serve(h, "GET", "/pods", "")
	want := "Forbidden (user=system:anonymous, verb=get, resource=nodes, subresource(s)=[pods proxy])\n"
	if w.Code != http.StatusForbidden || w.Body.String() != want {
		t.Fatalf("anonymous, denied: %d %q, want 403 %q", w.Code, w.Body.String(), want)
	}
	spec := f.access.asked[0]
	if spec.User != AnonymousUser || !slices.Equal(spec.Groups, []string{UnauthenticatedGroup}) {
		t.Fatalf("reviewed as %q %v", spec.User, spec.Groups)
	}
}

func TestFilterBadTokenIsNotAnonymous(t *testing.T) {
	f := newFixture(t)
	f.access.allow["proxy"] = true // anonymous would be let in
	h := f.handler(t, true)
	if w := serve(h, "GET", "/pods", "stolen-and-expired"); w.Code != http.StatusUnauthorized {
		t.Fatalf("refused token with anonymous on: %d, want 401", w.Code)
	}
}

func TestFilterAllowed(t *testing.T) {
	f := newFixture(t)
	f.access.allow["stats"] = true
	h := f.handler(t, false)
	w := serve(h, "GET", "/stats/summary", "good-1")
	if w.Code != http.StatusOK || w.Body.String() != "ok" {
		t.Fatalf("allowed request: %d %q", w.Code, w.Body.String())
	}
	if f.seen == nil || f.seen.Name != "sa-good-1" || !slices.Contains(f.seen.Groups, AuthenticatedGroup) {
		t.Fatalf("handler saw user %+v, want sa-good-1 in system:authenticated", f.seen)
	}
	if f.seenAuth != "" {
		t.Fatal("the bearer token reached the handler")
	}
	// A second request is served from both caches.
	serve(h, "GET", "/stats/summary", "good-1")
	if n, m := f.tokens.calls.Load(), len(f.access.askedSubresources()); n != 1 || m != 1 {
		t.Fatalf("%d TokenReviews and %d SubjectAccessReviews for two requests, want 1 and 1", n, m)
	}
}

// A path the router and the authorizer could read differently is refused
// before anything is judged: a caller allowed metrics must not reach /pods
// through /pods/%2E%2E/metrics (the router sees a segment "%2E%2E" under
// /pods/, a decoding authorizer sees /metrics).
func TestFilterRefusesAmbiguousPaths(t *testing.T) {
	f := newFixture(t)
	f.access.allow["metrics"] = true
	f.access.allow["stats"] = true
	h := f.handler(t, false)
	for _, raw := range []string{
		"/pods/%2E%2E/metrics", "/pods/%2e%2e/stats/summary", "/runningpods/%2E%2E/metrics",
		"/stats/../exec/ns/pod/c", "/exec/ns/pod/./c", "//pods", "/containerLogs/ns//c",
		"/containerLogs/ns%2Fother/pod/c", "/exec/%2E%2E/%2E%2E/metrics/x",
	} {
		r, err := http.ReadRequest(bufioReader("GET " + raw + " HTTP/1.1\r\nHost: n\r\nAuthorization: Bearer good-1\r\n\r\n"))
		if err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != http.StatusBadRequest || f.seen != nil {
			t.Errorf("GET %s = %d %q (handler reached: %v), want 400", raw, w.Code, w.Body.String(), f.seen != nil)
		}
	}
	if w := serve(h, "GET", "/metrics", "good-1"); w.Code != 200 {
		t.Fatalf("a plain path: %d", w.Code)
	}
	if w := serve(h, "GET", "/pods/", "good-1"); w.Code != http.StatusForbidden {
		t.Fatalf("/pods/ with metrics only: %d, want 403", w.Code)
	}
}

func bufioReader(s string) *bufio.Reader { return bufio.NewReader(strings.NewReader(s)) }

func TestFilterAuthorizationError(t *testing.T) {
	f := newFixture(t)
	f.access.fail = map[string]bool{"pods": true, "proxy": true}
	h := f.handler(t, false)
	w := serve(h, "GET", "/pods", "good-1")
	if w.Code != http.StatusInternalServerError {
		t.Fatalf("status %d, want 500", w.Code)
	}
	if body := w.Body.String(); strings.Contains(body, errBoom.Error()) || !strings.HasPrefix(body, "Authorization error (user=sa-good-1, verb=get, resource=nodes, subresource(s)=[pods proxy])") {
		t.Fatalf("body %q: want the kubelet's shape and no detail of the cause", body)
	}
}

func TestFilterErrorOnSpecificThenProxyGranted(t *testing.T) {
	f := newFixture(t)
	f.access.fail = map[string]bool{"pods": true}
	f.access.allow["proxy"] = true
	h := f.handler(t, false)
	if w := serve(h, "GET", "/pods", "good-1"); w.Code != http.StatusOK {
		t.Fatalf("status %d, want 200 through the proxy grant", w.Code)
	}
}

// TestFilterOverTLS goes through a real TLS handshake with a client
// certificate.
func TestFilterOverTLS(t *testing.T) {
	f := newFixture(t)
	f.access.allow["metrics"] = true
	srv := httptest.NewUnstartedServer(f.handler(t, false))
	srv.TLS = &tls.Config{ClientAuth: tls.RequestClientCert}
	srv.StartTLS()
	defer srv.Close()

	roots := x509.NewCertPool()
	roots.AddCert(srv.Certificate())
	// get makes a request on a connection of its own, with certs as the
	// client certificate.
	get := func(certs ...tls.Certificate) *http.Response {
		t.Helper()
		tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots, Certificates: certs}}
		defer tr.CloseIdleConnections()
		resp, err := (&http.Client{Transport: tr}).Get(srv.URL + "/metrics/cadvisor")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	if resp := get(); resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("no client certificate: %d, want 401", resp.StatusCode)
	}

	leaf, key := f.ca.client(t, "system:node:node-2", []string{"system:nodes"}, leafOpts{})
	if resp := get(tls.Certificate{Certificate: [][]byte{leaf.Raw}, PrivateKey: key}); resp.StatusCode != http.StatusOK {
		t.Fatalf("client certificate: %d, want 200", resp.StatusCode)
	}
	if f.seen == nil || f.seen.Name != "system:node:node-2" || !slices.Equal(f.seen.Groups, []string{"system:nodes", AuthenticatedGroup}) {
		t.Fatalf("handler saw %+v", f.seen)
	}
	if f.tokens.calls.Load() != 0 {
		t.Fatal("a TokenReview was made for a certificate")
	}

	other := newCA(t, "other")
	leaf, key = other.client(t, "mallory", nil, leafOpts{})
	if resp := get(tls.Certificate{Certificate: [][]byte{leaf.Raw}, PrivateKey: key}); resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("certificate of another CA: %d, want 401", resp.StatusCode)
	}
}
