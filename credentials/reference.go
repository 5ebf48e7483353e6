package credentials

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// ErrInvalidReference: the image name cannot be parsed as a registry
// reference; a pull would fail the same way every time.
var ErrInvalidReference = errors.New("invalid reference format")

const (
	defaultDomain       = "docker.io"
	legacyDefaultDomain = "index.docker.io"
	officialRepoPrefix  = "library/"
	maxNameLength       = 255
)

// Reference is a parsed, normalized image reference:
// "busybox" is docker.io / library/busybox with tag "latest".
type Reference struct {
	Domain string // registry host, with its port if any
	Path   string // repository path within the registry
	Tag    string // "" when only a digest is given
	Digest string // "algorithm:hex", or ""
}

// Repository is the name the keyring matches credentials against.
func (r Reference) Repository() string { return r.Domain + "/" + r.Path }

// String is the fully qualified reference, with the implied ":latest".
func (r Reference) String() string {
	s := r.Repository()
	if r.Tag != "" {
		s += ":" + r.Tag
	}
	if r.Digest != "" {
		s += "@" + r.Digest
	}
	return s
}

// The grammar of distribution's reference package, written out once.
var (
	referencePattern = func() *regexp.Regexp {
		const (
			alnum     = `[a-z0-9]+`
			separator = `(?:[._]|__|[-]+)`
			component = alnum + `(?:` + separator + alnum + `)*`
			domainPt  = `(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])`
			host      = `(?:` + domainPt + `(?:\.` + domainPt + `)*|\[[a-fA-F0-9:]+\])`
			domain    = host + `(?::[0-9]+)?`
			tag       = `[\w][\w.-]{0,127}`
			digest    = `[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}`
		)
		return regexp.MustCompile(`^(` + domain + `)/(` + component + `(?:/` + component + `)*)(?::(` + tag + `))?(?:@(` + digest + `))?$`)
	}()
	// A bare image id is refused as a name: it would read as a repository
	// called by a digest's hex.
	hexIdentifier = regexp.MustCompile(`^[a-f0-9]{64}$`)
)

// ParseReference parses image as the registry clients do, filling in
// docker.io, "library/" and ":latest" where the name leaves them out.
func ParseReference(image string) (Reference, error) {
	if hexIdentifier.MatchString(image) {
		return Reference{}, fmt.Errorf("%w: cannot specify 64-byte hexadecimal strings", ErrInvalidReference)
	}
	domain, rest := splitDomain(image)
	name, _, _ := strings.Cut(rest, "@")
	if i := strings.LastIndex(name, ":"); i >= 0 {
		name = name[:i]
	}
	if strings.ToLower(name) != name {
		return Reference{}, fmt.Errorf("%w: repository name (%s) must be lowercase", ErrInvalidReference, name)
	}
	m := referencePattern.FindStringSubmatch(domain + "/" + rest)
	if m == nil {
		return Reference{}, ErrInvalidReference
	}
	r := Reference{Domain: m[1], Path: m[2], Tag: m[3], Digest: m[4]}
	if len(r.Repository()) > maxNameLength {
		return Reference{}, fmt.Errorf("%w: repository name must not be more than %d characters", ErrInvalidReference, maxNameLength)
	}
	if r.Tag == "" && r.Digest == "" {
		r.Tag = "latest"
	}
	return r, nil
}

// splitDomain: the first path element names a registry only if it looks
// like a host (a dot or a port), is "localhost", or has capitals (which
// no repository may have); otherwise the image is on Docker Hub.
func splitDomain(image string) (domain, rest string) {
	first, after, ok := strings.Cut(image, "/")
	if !ok || (!strings.ContainsAny(first, ".:") && first != "localhost" && strings.ToLower(first) == first) {
		domain, rest = defaultDomain, image
	} else {
		domain, rest = first, after
	}
	if domain == legacyDefaultDomain {
		domain = defaultDomain
	}
	if domain == defaultDomain && !strings.Contains(rest, "/") {
		rest = officialRepoPrefix + rest
	}
	return domain, rest
}
