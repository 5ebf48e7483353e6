package podspec

import (
	"errors"
	"fmt"
	"testing"

	v1 "k8s.io/api/core/v1"
)

// The class is found by errors.Is, and the message is the cause's own,
// as the kubelet words CreateContainerConfigError.
func TestConfigErrorKeepsTheCausesWords(t *testing.T) {
	cause := errors.New(`configmap "app" not found`)
	for name, err := range map[string]error{
		"ConfigError":           ConfigError(cause),
		"configErrorf":          configErrorf("configmap %q not found", "app"),
		"wrapped by the caller": fmt.Errorf("start: %w", ConfigError(cause)),
	} {
		if !errors.Is(err, ErrConfig) {
			t.Errorf("%s: %v is not ErrConfig", name, err)
		}
		if want := `configmap "app" not found`; name != "wrapped by the caller" && err.Error() != want {
			t.Errorf("%s: message %q, want %q", name, err, want)
		}
	}
	if !errors.Is(ConfigError(cause), cause) {
		t.Error("ConfigError hides its cause from errors.Is")
	}
	if errors.Is(cause, ErrConfig) {
		t.Error("the cause itself is classed")
	}
}

// A reference to a missing key reads as the kubelet's, naming the
// namespace and the object.
func TestMissingKeyInTheKubeletsWords(t *testing.T) {
	objs := &EnvObjects{
		ConfigMaps: map[string]map[string][]byte{"app": {"a": []byte("1")}},
		Secrets:    map[string]map[string][]byte{"db": {"user": []byte("x")}},
	}
	for _, c := range []struct {
		src  v1.EnvVarSource
		want string
	}{
		{v1.EnvVarSource{ConfigMapKeyRef: &v1.ConfigMapKeySelector{LocalObjectReference: v1.LocalObjectReference{Name: "app"}, Key: "b"}},
			"couldn't find key b in ConfigMap shop/app"},
		{v1.EnvVarSource{SecretKeyRef: &v1.SecretKeySelector{LocalObjectReference: v1.LocalObjectReference{Name: "db"}, Key: "password"}},
			"couldn't find key password in Secret shop/db"},
		{v1.EnvVarSource{ConfigMapKeyRef: &v1.ConfigMapKeySelector{LocalObjectReference: v1.LocalObjectReference{Name: "gone"}, Key: "b"}},
			`configmap "gone" not found`},
	} {
		_, _, err := keyRefValue("shop", &c.src, objs)
		if err == nil || err.Error() != c.want {
			t.Errorf("error %v, want %q", err, c.want)
		}
	}
}
