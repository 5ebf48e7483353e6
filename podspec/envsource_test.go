package podspec

import (
	"errors"
	"testing"

	v1 "k8s.io/api/core/v1"
)

func TestEnvSourceOf(t *testing.T) {
	f := func(vf *v1.EnvVarSource, want EnvSource, unsupported bool, msg string) {
		t.Helper()
		got, err := EnvSourceOf(vf)
		if got != want {
			t.Errorf("source %q, want %q", got, want)
		}
		switch {
		case msg == "" && err != nil:
			t.Errorf("%s: unexpected %v", want, err)
		case msg != "" && (err == nil || err.Error() != msg || errors.Is(err, ErrUnsupported) != unsupported):
			t.Errorf("%s: error %v, want %q (unsupported=%v)", want, err, msg, unsupported)
		}
	}
	f(&v1.EnvVarSource{FieldRef: &v1.ObjectFieldSelector{}}, FieldRef, false, "")
	f(&v1.EnvVarSource{ResourceFieldRef: &v1.ResourceFieldSelector{}}, ResourceFieldRef, false, "")
	f(&v1.EnvVarSource{ConfigMapKeyRef: &v1.ConfigMapKeySelector{}}, ConfigMapKeyRef, false, "")
	f(&v1.EnvVarSource{SecretKeyRef: &v1.SecretKeySelector{}}, SecretKeyRef, false, "")
	f(&v1.EnvVarSource{FileKeyRef: &v1.FileKeySelector{}}, "fileKeyRef", true, "unsupported value source fileKeyRef")
	f(&v1.EnvVarSource{}, "", false, "must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef` or `secretKeyRef`")
	f(&v1.EnvVarSource{FieldRef: &v1.ObjectFieldSelector{}, SecretKeyRef: &v1.SecretKeySelector{}}, "", false,
		"may not have more than one field specified at a time")
}

func TestCheckEnvVarName(t *testing.T) {
	f := func(name string, ok bool) {
		t.Helper()
		if errs := CheckEnvVarName(name); (len(errs) == 0) != ok {
			t.Errorf("%q: %v, want ok=%v", name, errs, ok)
		}
	}
	f("PATH", true)
	f("weird.but-fine_1", true)
	f("1ST_KEY", true)
	f("a:b", true)
	f("A=B", false)
	f("", false)
	f("tab\there", false)
}
