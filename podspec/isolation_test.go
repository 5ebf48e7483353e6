package podspec

import (
	"errors"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
)

func TestCheckIsolation(t *testing.T) {
	gvisor, empty := "gvisor", ""
	no, yes := false, true
	cases := []struct {
		name string
		spec v1.PodSpec
		want string // "" = allowed
	}{
		{"plain pod", v1.PodSpec{}, ""},
		{"empty runtimeClassName", v1.PodSpec{RuntimeClassName: &empty}, ""},
		{"hostUsers true", v1.PodSpec{HostUsers: &yes}, ""},
		{"runtimeClassName", v1.PodSpec{RuntimeClassName: &gvisor}, `spec.runtimeClassName "gvisor"`},
		{"hostUsers false", v1.PodSpec{HostUsers: &no}, "spec.hostUsers: false"},
	}
	for _, c := range cases {
		err := CheckIsolation(&v1.Pod{Spec: c.spec})
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: refused: %v", c.name, err)
		case c.want != "" && (err == nil || !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: %v, want an ErrConfig naming %s", c.name, err, c.want)
		}
	}
}
