package credentials

import (
	"errors"
	"strings"
	"testing"
)

func TestParseReference(t *testing.T) {
	const dg = "sha256:7b6539f2cdba4d7979246976ece60f999c7b1316d17b2c8d1ab9cbbeec707cfa"
	for _, tc := range []struct {
		image, want, repo string
	}{
		{"busybox", "docker.io/library/busybox:latest", "docker.io/library/busybox"},
		{"busybox:1.36", "docker.io/library/busybox:1.36", "docker.io/library/busybox"},
		{"library/busybox", "docker.io/library/busybox:latest", "docker.io/library/busybox"},
		{"team/app:v1", "docker.io/team/app:v1", "docker.io/team/app"},
		{"index.docker.io/busybox", "docker.io/library/busybox:latest", "docker.io/library/busybox"},
		{"docker.io/library/busybox:1.36", "docker.io/library/busybox:1.36", "docker.io/library/busybox"},
		{"localhost/app", "localhost/app:latest", "localhost/app"},
		{"127.0.0.1:5043/private/busybox:1.36", "127.0.0.1:5043/private/busybox:1.36", "127.0.0.1:5043/private/busybox"},
		{"registry.example.com:5000/a/b/c", "registry.example.com:5000/a/b/c:latest", "registry.example.com:5000/a/b/c"},
		{"Registry.Example.com/app", "Registry.Example.com/app:latest", "Registry.Example.com/app"},
		{"[::1]:5000/app:v1", "[::1]:5000/app:v1", "[::1]:5000/app"},
		{"busybox@" + dg, "docker.io/library/busybox@" + dg, "docker.io/library/busybox"},
		{"busybox:1.36@" + dg, "docker.io/library/busybox:1.36@" + dg, "docker.io/library/busybox"},
		{"r:5000/my_app-x.y__z/a--b:v1.2-rc_3", "r:5000/my_app-x.y__z/a--b:v1.2-rc_3", "r:5000/my_app-x.y__z/a--b"},
	} {
		r, err := ParseReference(tc.image)
		if err != nil {
			t.Errorf("ParseReference(%q): %v", tc.image, err)
			continue
		}
		if r.String() != tc.want || r.Repository() != tc.repo {
			t.Errorf("ParseReference(%q) = %s (repository %s), want %s (%s)", tc.image, r, r.Repository(), tc.want, tc.repo)
		}
	}
}

func TestParseReferenceRefuses(t *testing.T) {
	for _, tc := range []struct{ image, why string }{
		{"", ""},
		{"Busybox", "must be lowercase"},
		{"docker.io/Library/busybox", "must be lowercase"},
		{"busybox:", ""},
		{"busybox@sha256:abc", ""},
		{"busybox:-bad", ""},
		{"busybox:" + strings.Repeat("x", 129), ""},
		{"a//b", ""},
		{"-app", ""},
		{"app-", ""},
		{"r:port/app", ""},
		{"busybox with space", ""},
		{strings.Repeat("a", 64), "64-byte hexadecimal"},
		{"r.io/" + strings.Repeat("a", 260), "255 characters"},
	} {
		_, err := ParseReference(tc.image)
		if !errors.Is(err, ErrInvalidReference) || !strings.Contains(err.Error(), tc.why) {
			t.Errorf("ParseReference(%q) = %v, want %v mentioning %q", tc.image, err, ErrInvalidReference, tc.why)
		}
	}
}
