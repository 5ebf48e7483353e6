package pullrecords

import (
	"errors"
	"strings"
	"testing"
)

func TestNewPolicy(t *testing.T) {
	if p, err := NewPolicy("", nil); err != nil || p.String() != NeverVerifyPreloadedImages {
		t.Errorf(`NewPolicy("") = %v, %v; want the default, NeverVerifyPreloadedImages`, p, err)
	}
	ok := func(name string, allow ...string) {
		t.Helper()
		if _, err := NewPolicy(name, allow); err != nil {
			t.Errorf("NewPolicy(%q, %q): %v", name, allow, err)
		}
	}
	ok(NeverVerify)
	ok(AlwaysVerify)
	ok(NeverVerifyAllowlistedImages)
	ok(NeverVerifyAllowlistedImages, "docker.io/library/busybox", "r.io:5000/team/*", "r.io/*", "127.0.0.1:5043/private/busybox")

	bad := func(name string, allow []string, class error, words string) {
		t.Helper()
		_, err := NewPolicy(name, allow)
		if !errors.Is(err, class) || !strings.Contains(err.Error(), words) {
			t.Errorf("NewPolicy(%q, %q) = %v, want %v saying %q", name, allow, err, class, words)
		}
	}
	bad("neververify", nil, ErrUnknownPolicy, `"neververify": valid options are "NeverVerify", "NeverVerifyPreloadedImages", "NeverVerifyAllowlistedImages" or "AlwaysVerify"`)
	bad(NeverVerifyPreloadedImages, []string{"r.io/*"}, ErrAllowlistUnused, "the policy is NeverVerifyPreloadedImages")
	allow := func(pattern, words string) {
		t.Helper()
		bad(NeverVerifyAllowlistedImages, []string{"r.io/ok", pattern}, ErrBadPattern, words)
	}
	allow(" r.io/app", "leading or trailing spaces")
	allow("r.io/*/app", "only a trailing full path segment wildcard '/*'")
	allow("r.io/app*", "only a trailing full path segment wildcard '/*'")
	allow("r.io/**", "only a trailing full path segment wildcard '/*'")
	allow("/*", "at least the registry hostname")
	allow("*", "only a trailing full path segment wildcard")
	allow("busybox", "want the full image name without tag or digest (docker.io/library/busybox)")
	allow("r.io/app:1", "without tag or digest (r.io/app)")
	allow("r.io/app@sha256:"+strings.Repeat("a", 64), "without tag or digest")
	allow("R.io/App", "not an image name")
}
