package podspec

import "testing"

func TestExpandRefs(t *testing.T) {
	vars := map[string]string{"A": "alpha", "B": "", "PATH_1": "/bin", "DOLLAR": "$(A)"}
	lookup := func(name string) (string, bool) {
		v, ok := vars[name]
		return v, ok
	}
	f := func(in, want string) {
		t.Helper()
		if got := expandRefs(in, lookup); got != want {
			t.Errorf("expandRefs(%q) = %q, want %q", in, got, want)
		}
	}
	f("", "")
	f("plain", "plain")
	f("$(A)", "alpha")
	f("x$(A)y$(A)z", "xalphayalphaz")
	f("$(PATH_1)/sh", "/bin/sh")
	f("[$(B)]", "[]")
	f("$(UNKNOWN)", "$(UNKNOWN)")
	f("a $(UNKNOWN) and $(A)", "a $(UNKNOWN) and alpha")
	f("$$", "$")
	f("$$(A)", "$(A)")
	f("$$$(A)", "$alpha")
	f("$$$$(A)", "$$(A)")
	f("cost: $5", "cost: $5")
	f("trailing $", "trailing $")
	f("$", "$")
	f("$(A", "$(A")
	f("$(A)$(A", "alpha$(A")
	f("$()", "$()")
	f("$(A $(A))", "$(A $(A))")
	f("$(DOLLAR)", "$(A)") // values are not expanded again
	f("$(A)$$(A)$(A)", "alpha$(A)alpha")
}
