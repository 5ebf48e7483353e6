package redact

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"
)

func TestURL(t *testing.T) {
	f := func(raw, want string) {
		t.Helper()
		if got := URL(raw); got != want {
			t.Errorf("URL(%q) = %q, want %q", raw, got, want)
		}
		// Redacting twice (an error redacted, then wrapped and
		// redacted again) changes nothing more.
		if got := URL(want); got != want && want != "" {
			t.Errorf("URL(%q) = %q: not the same again", want, got)
		}
	}
	f("", "")
	f("http://example.com/pods", "http://example.com/pods")
	f("https://example.com:8443/a/b.yaml", "https://example.com:8443/a/b.yaml")
	// The user goes with the password: tokens are given as the user.
	f("https://user:pass@example.com/pods", "https://<redacted>@example.com/pods")
	f("https://ghp_token@example.com/pods", "https://<redacted>@example.com/pods")
	f("https://user:@example.com/", "https://<redacted>@example.com/")
	// Every query value, names kept in order; an item without '=' whole.
	f("https://example.com/pods?token=s3cret", "https://example.com/pods?token=<redacted>")
	f("https://b.s3.amazonaws.com/p.yaml?X-Amz-Credential=AK%2F1&X-Amz-Signature=ab12&X-Amz-Expires=300",
		"https://b.s3.amazonaws.com/p.yaml?X-Amz-Credential=<redacted>&X-Amz-Signature=<redacted>&X-Amz-Expires=<redacted>")
	f("https://a.blob.core.windows.net/c/p?sv=2024&sig=abc%3D&se=x", "https://a.blob.core.windows.net/c/p?sv=<redacted>&sig=<redacted>&se=<redacted>")
	f("https://example.com/pods?s3cretalone", "https://example.com/pods?<redacted>")
	f("https://example.com/pods?a=&&b", "https://example.com/pods?a=<redacted>&&<redacted>")
	f("https://example.com/pods?", "https://example.com/pods?")
	f("https://u:p@example.com/pods?k=v#frag", "https://<redacted>@example.com/pods?k=<redacted>#<redacted>")
	// IPv6 hosts and escaped paths come back as they were.
	f("http://u:p@[::1]:8080/a%20b", "http://<redacted>@[::1]:8080/a%20b")
	// What does not parse, or has no "//", is not guessed at.
	f("http://u:p@host:port/", "<redacted>")
	f("http://[::1/x?token=a", "<redacted>")
	f("mailto:user:pass@example.com", "mailto:<redacted>")
	f("s3cret-token", "<redacted>")
	f("//user:pass@example.com/pods", "<redacted>")
}

func TestHeaders(t *testing.T) {
	f := func(list, want string) {
		t.Helper()
		if got := Headers(list); got != want {
			t.Errorf("Headers(%q) = %q, want %q", list, got, want)
		}
	}
	f("", "")
	f("Authorization:Bearer s3cret", "Authorization:<redacted>")
	f("Authorization: Bearer s3cret,X-Token:abc", "Authorization:<redacted>,X-Token:<redacted>")
	f("X-Empty:", "X-Empty:<redacted>")
	// A value given alone, or with a key that is no header name.
	f("Bearer s3cret", "<redacted>")
	f("Bearer s3cret:x", "<redacted>")
}

// errURL is the *url.Error http.Client.Do returns for a request to raw
// that fails to connect.
func errURL(t *testing.T, raw string) error {
	t.Helper()
	// A port nothing listens on: the listener is closed at once.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, strings.Replace(raw, "HOST", addr, 1), nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = (&http.Client{Timeout: 5 * time.Second}).Do(req)
	if err == nil {
		t.Fatal("request to a closed port succeeded")
	}
	return err
}

func TestError(t *testing.T) {
	raw := "http://user:pass@HOST/pods?token=s3cret"
	cause := errURL(t, raw)
	if !strings.Contains(cause.Error(), "s3cret") || !strings.Contains(cause.Error(), "user") {
		t.Fatalf("net/http's error %q no longer shows the URL: the test shows nothing", cause)
	}
	for _, err := range []error{cause, fmt.Errorf("fetch: %w", cause)} {
		got := Error(err, "")
		for _, secret := range []string{"s3cret", "user", "pass"} {
			if strings.Contains(got.Error(), secret) {
				t.Errorf("Error(%q) = %q: shows %s", err, got, secret)
			}
		}
		if !strings.Contains(got.Error(), "/pods?token=<redacted>") || !strings.Contains(got.Error(), "connection refused") {
			t.Errorf("Error(%q) = %q: want the redacted URL and the cause", err, got)
		}
		var ue *url.Error
		if !errors.As(got, &ue) || !errors.Is(got, errors.Unwrap(cause)) {
			t.Errorf("Error(%q) no longer matches what it wrapped", err)
		}
	}
	var ue *url.Error
	if errors.As(Error(cause, ""), &ue); strings.Contains(ue.Error(), "s3cret") {
		t.Errorf("unwrapped to %q", ue)
	}
	// The URL podline was given, wherever else the text has it.
	given := "https://u:p@example.com/x?token=s3cret"
	if got := Error(fmt.Errorf("%s: status 403 Forbidden", given), given).Error(); got != "https://<redacted>@example.com/x?token=<redacted>: status 403 Forbidden" {
		t.Errorf("Error = %q", got)
	}
	if Error(nil, given) != nil {
		t.Error("Error(nil) is not nil")
	}
}

// A redirect's Location is the server's choice and may carry credentials
// (a token as the user, a signed URL's query) as the manifest URL does.
// None of it shows, whether net/http follows it (its error names the URL
// it failed on) or cannot parse it: then the error quotes the Location,
// and url.Parse's reason may quote a piece of it (the password of
// "http://alice:s3cret/" read as a port).
func TestErrorRedirectLocation(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().String() // a port nothing listens on
	l.Close()
	f := func(location string, want ...string) {
		t.Helper()
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Location", location)
			w.WriteHeader(http.StatusFound)
		}))
		defer srv.Close()
		resp, cause := (&http.Client{Timeout: 5 * time.Second}).Get(srv.URL + "/pods")
		if cause == nil {
			resp.Body.Close()
			t.Fatalf("Location %q: the client followed it", location)
		}
		if !strings.Contains(cause.Error(), "t0ken") {
			t.Fatalf("net/http's error %q no longer shows the Location: the test shows nothing", cause)
		}
		got := Error(cause, "")
		var ue *url.Error
		if !errors.As(got, &ue) {
			t.Fatalf("Error(%q) is no *url.Error", cause)
		}
		// Unwrapped as far as it goes, the text shows none of it either.
		texts := []string{got.Error()}
		for e := error(ue); e != nil; e = errors.Unwrap(e) {
			texts = append(texts, e.Error())
		}
		for _, text := range texts {
			for _, secret := range []string{"alice", "s3cret", "t0ken"} {
				if strings.Contains(text, secret) {
					t.Errorf("Location %q: %q shows %s", location, text, secret)
				}
			}
		}
		for _, w := range want {
			if !strings.Contains(got.Error(), w) {
				t.Errorf("Location %q: %q, want it to say %q", location, got, w)
			}
		}
	}
	// Malformed: nothing of it can be told safe.
	f("http://alice:s3cret@example.com:port/pods?token=t0ken",
		`failed to parse Location header <redacted>: parse <redacted>: invalid port <redacted> after host`)
	f("http://alice:s3cret/pods?token=t0ken", "failed to parse Location header <redacted>")
	f("http://alice:s3cret@exa mple.com/pods?token=t0ken", "failed to parse Location header <redacted>")
	// Well-formed: followed, and named redacted as the URL it failed on.
	f("http://alice:s3cret@"+closed+"/pods?token=t0ken",
		`Get "http://<redacted>@`+closed+`/pods?token=<redacted>": dial tcp`, "connection refused")
}
