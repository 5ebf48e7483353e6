package credentials

import (
	"encoding/base64"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// configJSON is a kubernetes.io/dockerconfigjson secret: each pair is a
// registry key and "user:password" (stored as the auth field).
func configJSON(name string, pairs ...string) *v1.Secret {
	return &v1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name},
		Type:       v1.SecretTypeDockerConfigJson,
		Data:       map[string][]byte{v1.DockerConfigJsonKey: []byte(`{"auths":{` + auths(pairs) + `}}`)},
	}
}

// dockercfg is the older kubernetes.io/dockercfg form of the same.
func dockercfg(name string, pairs ...string) *v1.Secret {
	return &v1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name},
		Type:       v1.SecretTypeDockercfg,
		Data:       map[string][]byte{v1.DockerConfigKey: []byte(`{` + auths(pairs) + `}`)},
	}
}

func auths(pairs []string) string {
	var parts []string
	for i := 0; i < len(pairs); i += 2 {
		parts = append(parts, fmt.Sprintf("%q:{\"auth\":%q}", pairs[i], base64.StdEncoding.EncodeToString([]byte(pairs[i+1]))))
	}
	return strings.Join(parts, ",")
}

// users lists "user@secret" for each credential, in order.
func users(creds []Credential) []string {
	out := []string{}
	for _, c := range creds {
		out = append(out, c.Username+"@"+strings.TrimPrefix(c.Secret, "ns/"))
	}
	return out
}

func TestLookupMatching(t *testing.T) {
	for _, tc := range []struct {
		name    string
		image   string
		secrets []*v1.Secret
		want    []string
	}{
		{"no secrets: anonymous", "r.io/app", nil, []string{}},
		{"host key", "r.io/app:v1", []*v1.Secret{configJSON("a", "r.io", "u:p")}, []string{"u@a"}},
		{"URL key with scheme and API path", "r.io/app", []*v1.Secret{configJSON("a", "https://r.io/v2/", "u:p")}, []string{"u@a"}},
		{"http scheme", "r.io/app", []*v1.Secret{configJSON("a", "http://r.io", "u:p")}, []string{"u@a"}},
		{"other host", "r.io/app", []*v1.Secret{configJSON("a", "other.io", "u:p")}, []string{}},
		{"port must match", "r.io:5000/app", []*v1.Secret{configJSON("a", "r.io", "u:p")}, []string{}},
		{"port given", "r.io:5000/app", []*v1.Secret{configJSON("a", "r.io:5000", "u:p")}, []string{"u@a"}},
		{"port in key only", "r.io/app", []*v1.Secret{configJSON("a", "r.io:5000", "u:p")}, []string{}},
		{"IP and port", "127.0.0.1:5043/private/busybox:1.36", []*v1.Secret{configJSON("a", "127.0.0.1:5043", "u:p")}, []string{"u@a"}},
		{"glob label", "eu.r.io/app", []*v1.Secret{configJSON("a", "*.r.io", "u:p")}, []string{"u@a"}},
		{"glob needs as many labels", "a.eu.r.io/app", []*v1.Secret{configJSON("a", "*.r.io", "u:p")}, []string{}},
		{"glob does not match the bare domain", "r.io/app", []*v1.Secret{configJSON("a", "*.r.io", "u:p")}, []string{}},
		{"glob inside a label", "registry-eu.r.io/app", []*v1.Secret{configJSON("a", "registry-*.r.io", "u:p")}, []string{"u@a"}},
		{"path prefix", "r.io/team/app", []*v1.Secret{configJSON("a", "r.io/team", "u:p")}, []string{"u@a"}},
		{"path elsewhere", "r.io/other/app", []*v1.Secret{configJSON("a", "r.io/team", "u:p")}, []string{}},
		{"path prefix is a string prefix", "r.io/teamwork/app", []*v1.Secret{configJSON("a", "r.io/team", "u:p")}, []string{"u@a"}},
		{
			"most specific key first",
			"r.io/team/app",
			[]*v1.Secret{configJSON("a", "r.io", "host:p", "r.io/team", "team:p", "r.io/team/app", "app:p")},
			[]string{"app@a", "team@a", "host@a"},
		},
		{
			"one key in two secrets: secret order",
			"r.io/app",
			[]*v1.Secret{configJSON("b", "r.io", "second:p"), configJSON("a", "r.io", "first:p")},
			[]string{"second@b", "first@a"},
		},
		{
			"specificity across secrets before secret order",
			"r.io/team/app",
			[]*v1.Secret{configJSON("a", "r.io", "host:p"), configJSON("b", "r.io/team", "team:p")},
			[]string{"team@b", "host@a"},
		},
		{
			"two spellings of one registry in one secret",
			"r.io/app",
			[]*v1.Secret{configJSON("a", "r.io", "plain:p", "https://r.io", "url:p")},
			[]string{"url@a", "plain@a"},
		},
		{"dockercfg", "r.io/app", []*v1.Secret{dockercfg("a", "r.io", "old:p")}, []string{"old@a"}},
		{"Docker Hub by docker.io key", "busybox", []*v1.Secret{configJSON("a", "docker.io", "hub:p")}, []string{"hub@a"}},
		{"Docker Hub by legacy key", "busybox:1.36", []*v1.Secret{configJSON("a", "https://index.docker.io/v1/", "legacy:p")}, []string{"legacy@a"}},
		{"legacy key only for Docker Hub", "r.io/app", []*v1.Secret{configJSON("a", "https://index.docker.io/v1/", "legacy:p")}, []string{}},
		{
			"legacy key only when nothing else matches",
			"busybox",
			[]*v1.Secret{configJSON("a", "https://index.docker.io/v1/", "legacy:p", "docker.io", "hub:p")},
			[]string{"hub@a"},
		},
		{
			"type and key must agree",
			"r.io/app",
			[]*v1.Secret{
				{ObjectMeta: metav1.ObjectMeta{Name: "opaque"}, Type: v1.SecretTypeOpaque, Data: configJSON("x", "r.io", "u:p").Data},
				{ObjectMeta: metav1.ObjectMeta{Name: "wrong-key"}, Type: v1.SecretTypeDockercfg, Data: configJSON("x", "r.io", "u:p").Data},
				{ObjectMeta: metav1.ObjectMeta{Name: "empty"}, Type: v1.SecretTypeDockerConfigJson, Data: map[string][]byte{v1.DockerConfigJsonKey: nil}},
			},
			[]string{},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Lookup(tc.image, tc.secrets)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(users(got), tc.want) {
				t.Errorf("Lookup(%q) = %v, want %v", tc.image, users(got), tc.want)
			}
		})
	}
}

func TestLookupCredentialFields(t *testing.T) {
	s := &v1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "fields"},
		Type:       v1.SecretTypeDockerConfigJson,
		Data: map[string][]byte{v1.DockerConfigJsonKey: []byte(`{"auths":{
			"plain.io":{"username":"u1","password":"p:1"},
			"both.io":{"username":"ignored","password":"ignored","auth":"` + base64.StdEncoding.EncodeToString([]byte("u2:p:2")) + `"},
			"unpadded.io":{"auth":"` + base64.RawStdEncoding.EncodeToString([]byte("u3:p3")) + `"}
		}}`)},
	}
	for image, want := range map[string]Credential{
		"plain.io/a":    {Username: "u1", Password: "p:1", Secret: "ns/fields"},
		"both.io/a":     {Username: "u2", Password: "p:2", Secret: "ns/fields"},
		"unpadded.io/a": {Username: "u3", Password: "p3", Secret: "ns/fields"},
	} {
		got, err := Lookup(image, []*v1.Secret{s})
		if err != nil || len(got) != 1 || got[0] != want {
			t.Errorf("Lookup(%q) = %+v, %v; want [%+v]", image, got, err, want)
		}
	}
}

func TestLookupErrors(t *testing.T) {
	bad := func(typ v1.SecretType, key, content string) *v1.Secret {
		return &v1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "bad"}, Type: typ, Data: map[string][]byte{key: []byte(content)}}
	}
	for _, tc := range []struct {
		name   string
		secret *v1.Secret
		want   string
	}{
		{"json", bad(v1.SecretTypeDockerConfigJson, v1.DockerConfigJsonKey, `{"auths":`), "ns/bad: .dockerconfigjson"},
		{"dockercfg", bad(v1.SecretTypeDockercfg, v1.DockerConfigKey, `[1]`), "ns/bad: .dockercfg"},
		{"auth not base64", bad(v1.SecretTypeDockercfg, v1.DockerConfigKey, `{"r.io":{"auth":"%%%"}}`), `registry "r.io"`},
		{"auth without colon", bad(v1.SecretTypeDockercfg, v1.DockerConfigKey, `{"r.io":{"auth":"`+base64.StdEncoding.EncodeToString([]byte("nocolon"))+`"}}`), "user:password"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Even a secret for another registry fails the lookup, as the
			// kubelet builds its keyring from all of them first.
			_, err := Lookup("other.io/app", []*v1.Secret{configJSON("good", "other.io", "u:p"), tc.secret})
			if !errors.Is(err, ErrBadPullSecret) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Lookup = %v, want %v naming %q", err, ErrBadPullSecret, tc.want)
			}
		})
	}
	if _, err := Lookup("Bad/Name", nil); !errors.Is(err, ErrInvalidReference) {
		t.Errorf("Lookup(Bad/Name) = %v, want %v", err, ErrInvalidReference)
	}
}
