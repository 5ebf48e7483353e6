package podspec

import "testing"

func TestCheckSubPath(t *testing.T) {
	f := func(sub, want string) {
		t.Helper()
		got := ""
		if err := CheckSubPath(sub); err != nil {
			got = err.Error()
		}
		if got != want {
			t.Errorf("%q: error %q, want %q", sub, got, want)
		}
	}
	f("logs", "")
	f("a/b/c", "")
	f("a/..b/c..", "")
	f("./a", "")
	f("/etc", "must be a relative path")
	f("..", "must not contain '..'")
	f("a/../../etc", "must not contain '..'")
	f("a/..", "must not contain '..'")
}
