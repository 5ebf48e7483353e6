package credentials

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
)

// authConfig is the kubelet's credentialprovider.AuthConfig as its keyring
// fills it from a docker config: what the kubelet hashes, so that a hash
// podline records is the one the kubelet would record for the same
// secret.
type authConfig struct {
	Username string `json:"username,omitempty"`
	Password string `json:"password,omitempty"`
	Email    string `json:"email,omitempty"`
}

// Hash identifies the credential's content without holding it: the hex
// SHA-256 of its JSON, as the kubelet's ImagePulledRecords keep it. Two
// secrets with the same username, password and email hash alike.
func (c Credential) Hash() string {
	b, err := json.Marshal(authConfig{Username: c.Username, Password: c.Password, Email: c.Email})
	if err != nil {
		panic("BUG: a struct of strings did not marshal: " + err.Error())
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// SecretNamespaceName splits Secret into the secret's namespace and name.
func (c Credential) SecretNamespaceName() (namespace, name string) {
	namespace, name, _ = strings.Cut(c.Secret, "/")
	return namespace, name
}
