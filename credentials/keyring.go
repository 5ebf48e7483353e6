package credentials

import (
	"net"
	"net/url"
	"path"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
)

// Credential is one username and password to offer a registry.
type Credential struct {
	Username string
	Password string
	// Email is kept from the docker config only for Hash: registries
	// ignore it.
	Email string
	// Secret is the "namespace/name" of the pull secret it came from, and
	// SecretUID that secret's UID: what the node's records of image
	// pulls remember of it.
	Secret    string
	SecretUID string
}

// Lookup returns the credentials the pod's pull secrets hold for image, in
// the order to try them; none means pulling anonymously. A secret of a
// docker config type that does not parse fails the lookup (ErrBadPullSecret),
// as it fails the kubelet's pull; an image that does not parse is
// ErrInvalidReference.
//
// Every secret's keys form one keyring. The keys that match the image's
// repository are taken most specific first (reverse lexical order, so
// "r:5000/team" before "r:5000"), each key's credentials in the order of
// the secrets; only when no key matches does a Docker Hub image fall back
// to the legacy "https://index.docker.io/v1/" key.
func Lookup(image string, secrets []*v1.Secret) ([]Credential, error) {
	ref, err := ParseReference(image)
	if err != nil {
		return nil, err
	}
	byKey := map[string][]Credential{}
	var keys []string
	for _, s := range secrets {
		entries, err := secretEntries(s)
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			if _, seen := byKey[e.key]; !seen {
				keys = append(keys, e.key)
			}
			byKey[e.key] = append(byKey[e.key], e.cred)
		}
	}
	slices.Sort(keys)
	slices.Reverse(keys)
	repo := ref.Repository()
	var out []Credential
	for _, k := range keys {
		if keyMatches(k, repo) {
			out = append(out, byKey[k]...)
		}
	}
	if len(out) == 0 && ref.Domain == defaultDomain {
		out = append(out, byKey[legacyDefaultDomain]...)
	}
	return out, nil
}

// keyOf turns a docker config key (a host, a host and path, or a URL) into
// the keyring's key: host[:port][/path], where the API version paths
// "/v1/" and "/v2/" mean the host alone.
func keyOf(loc string) (string, bool) {
	if !strings.HasPrefix(loc, "https://") && !strings.HasPrefix(loc, "http://") {
		loc = "https://" + loc
	}
	u, err := url.Parse(loc)
	if err != nil {
		return "", false
	}
	p := u.Path
	if strings.HasPrefix(p, "/v2/") || strings.HasPrefix(p, "/v1/") {
		p = p[3:]
	}
	if p == "" || p == "/" {
		return u.Host, true
	}
	return u.Host + p, true
}

// keyMatches reports whether a keyring key covers a repository: the same
// port, as many host labels, each matching the key's label as a glob
// ("*.example.com"), and the key's path a prefix of the repository's (a
// plain string prefix: "r/team" also covers "r/teamwork/app", as in the
// kubelet).
func keyMatches(key, repo string) bool {
	k, err := url.Parse("https://" + key)
	if err != nil {
		return false
	}
	r, err := url.Parse("https://" + repo)
	if err != nil {
		return false
	}
	kLabels, kPort := hostLabels(k.Host)
	rLabels, rPort := hostLabels(r.Host)
	if kPort != rPort || len(kLabels) != len(rLabels) || !strings.HasPrefix(r.Path, k.Path) {
		return false
	}
	for i, glob := range kLabels {
		if ok, err := path.Match(glob, rLabels[i]); err != nil || !ok {
			return false
		}
	}
	return true
}

func hostLabels(hostport string) ([]string, string) {
	host, port, err := net.SplitHostPort(hostport)
	if err != nil {
		host, port = hostport, ""
	}
	return strings.Split(host, "."), port
}
