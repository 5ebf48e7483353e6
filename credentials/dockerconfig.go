package credentials

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	v1 "k8s.io/api/core/v1"
)

// ErrBadPullSecret: a pull secret of a docker config type holds JSON that
// does not parse, or an "auth" that is not base64 of "user:password".
var ErrBadPullSecret = errors.New("invalid image pull secret")

// entry is one registry's credentials in a docker config file.
type entry struct {
	Username string `json:"username,omitempty"`
	Password string `json:"password,omitempty"`
	Email    string `json:"email,omitempty"`
	// Auth is base64("user:password"); when set it wins over the two
	// fields above, as in the docker CLI.
	Auth string `json:"auth,omitempty"`
}

// dockerConfigJSON is the content of a kubernetes.io/dockerconfigjson
// secret's .dockerconfigjson: ~/.docker/config.json. A
// kubernetes.io/dockercfg secret's .dockercfg is the auths map alone, the
// older ~/.dockercfg.
type dockerConfigJSON struct {
	Auths map[string]entry `json:"auths"`
}

// configEntry is one key of one secret's config, in the order the keyring
// must keep.
type configEntry struct {
	key  string
	cred Credential
}

// secretEntries reads the docker config of one secret. Secrets of other
// types, or whose key is missing or empty, give nothing: the kubelet looks
// at a secret only when its type and its data agree.
func secretEntries(s *v1.Secret) ([]configEntry, error) {
	var auths map[string]entry
	switch data := s.Data; {
	case s.Type == v1.SecretTypeDockerConfigJson && len(data[v1.DockerConfigJsonKey]) > 0:
		var cfg dockerConfigJSON
		if err := json.Unmarshal(data[v1.DockerConfigJsonKey], &cfg); err != nil {
			return nil, fmt.Errorf("%w %s/%s: %s: %v", ErrBadPullSecret, s.Namespace, s.Name, v1.DockerConfigJsonKey, err)
		}
		auths = cfg.Auths
	case s.Type == v1.SecretTypeDockercfg && len(data[v1.DockerConfigKey]) > 0:
		if err := json.Unmarshal(data[v1.DockerConfigKey], &auths); err != nil {
			return nil, fmt.Errorf("%w %s/%s: %s: %v", ErrBadPullSecret, s.Namespace, s.Name, v1.DockerConfigKey, err)
		}
	default:
		return nil, nil
	}
	// A config is a JSON object: its order means nothing, but two spellings
	// of one registry ("https://r:5000", "r:5000") must come out the same
	// way every time.
	locs := make([]string, 0, len(auths))
	for loc := range auths {
		locs = append(locs, loc)
	}
	sort.Strings(locs)
	out := make([]configEntry, 0, len(locs))
	for _, loc := range locs {
		e := auths[loc]
		cred := Credential{Username: e.Username, Password: e.Password, Email: e.Email,
			Secret: s.Namespace + "/" + s.Name, SecretUID: string(s.UID)}
		if e.Auth != "" {
			var err error
			if cred.Username, cred.Password, err = decodeAuth(e.Auth); err != nil {
				return nil, fmt.Errorf("%w %s/%s: registry %q: %v", ErrBadPullSecret, s.Namespace, s.Name, loc, err)
			}
		}
		key, ok := keyOf(loc)
		if !ok {
			continue // the kubelet skips a key that is not a URL
		}
		out = append(out, configEntry{key: key, cred: cred})
	}
	return out, nil
}

// decodeAuth reads base64("user:password"), padded or not.
func decodeAuth(field string) (user, password string, err error) {
	enc := base64.RawStdEncoding
	if strings.HasSuffix(strings.TrimSpace(field), "=") {
		enc = base64.StdEncoding
	}
	raw, err := enc.DecodeString(field)
	if err != nil {
		return "", "", fmt.Errorf("auth: %v", err)
	}
	user, password, ok := strings.Cut(string(raw), ":")
	if !ok {
		return "", "", errors.New(`auth: want base64 of "user:password"`)
	}
	return user, password, nil
}
