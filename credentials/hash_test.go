package credentials

import (
	"testing"

	v1 "k8s.io/api/core/v1"
)

// The hash is the kubelet's: its keyring test pins this value for a
// secret holding user:password.
func TestCredentialHashIsTheKubelets(t *testing.T) {
	c := Credential{Username: "user", Password: "password", Secret: "ns1/s1", SecretUID: "uid1"}
	if got, want := c.Hash(), "a55436fc140d516560d072c5fe8700385ce9f41629abf65c1edcbcb39fac691d"; got != want {
		t.Errorf("Hash() = %s, want %s", got, want)
	}
	// The secret it came from is not part of the content.
	other := c
	other.Secret, other.SecretUID = "ns2/s2", "uid2"
	if other.Hash() != c.Hash() {
		t.Error("the same credentials in another secret hash differently")
	}
	for _, changed := range []Credential{
		{Username: "user", Password: "other"},
		{Username: "other", Password: "password"},
		{Username: "user", Password: "password", Email: "u@example.com"},
	} {
		if changed.Hash() == c.Hash() {
			t.Errorf("%+v hashes like user:password", changed)
		}
	}
}

func TestLookupKeepsTheSecretsUID(t *testing.T) {
	s := configJSON("a", "r.io", "u:p")
	s.UID = "uid-a"
	got, err := Lookup("r.io/app", []*v1.Secret{s})
	if err != nil || len(got) != 1 {
		t.Fatalf("Lookup = %+v, %v", got, err)
	}
	if ns, name := got[0].SecretNamespaceName(); ns != "ns" || name != "a" || got[0].SecretUID != "uid-a" {
		t.Errorf("credential from %s/%s uid %q, want ns/a uid-a", ns, name, got[0].SecretUID)
	}
}
