package poduid

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/types"
)

func TestCheck(t *testing.T) {
	f := func(uid string, want ...string) {
		t.Helper()
		got := Check(uid)
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("Check(%q) = %q, want %q", uid, got, want)
		}
		if Valid(uid) != (len(want) == 0) || Valid(types.UID(uid)) != Valid(uid) {
			t.Errorf("Valid(%q) = %v, want %v", uid, Valid(uid), len(want) == 0)
		}
	}
	// What Kubernetes makes, and what an author may write.
	f("0b5c8f5e-8ed6-4cf5-9c1a-3f6b3b1c2d4e")
	f("0B5C8F5E-8ED6-4CF5-9C1A-3F6B3B1C2D4E")
	f("6a5c1b3f0e9d8c7b6a5f4e3d2c1b0a99")
	f("my_static.pod-1")
	f("a")
	f("-leading-dash")
	f("trailing.")
	f(strings.Repeat("f", MaxLength))

	long := "must be no more than 128 characters"
	f(strings.Repeat("f", MaxLength+1), long)
	f(strings.Repeat("/", MaxLength+1), long, Message)
	for _, bad := range []string{
		"", ".", "..", ".hidden", "../pods", "x/../../../../etc", "/etc", "a/b", "a\\b",
		"sp ace", "tab\t", "new\nline", "nul\x00", "colon:1", "star*", "ünï", "\xff",
	} {
		f(bad, Message)
	}
}

func TestValidDoesNotAllocate(t *testing.T) {
	uid := types.UID("0b5c8f5e-8ed6-4cf5-9c1a-3f6b3b1c2d4e")
	if n := testing.AllocsPerRun(100, func() { Valid(uid) }); n != 0 {
		t.Errorf("Valid allocates %v times", n)
	}
}
