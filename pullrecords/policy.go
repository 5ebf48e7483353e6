package pullrecords

import (
	"errors"
	"fmt"
	"strings"

	"github.com/podline/podline/credentials"
)

// The policies, as KubeletConfiguration's imagePullCredentialsVerificationPolicy
// spells them.
const (
	// NeverVerify: any pod may use any image present on the node.
	NeverVerify = "NeverVerify"
	// NeverVerifyPreloadedImages: images that something other than the
	// node agent put on the node (no record, no pull under way) may be
	// used by any pod; the node agent's own pulls are verified. The
	// default.
	NeverVerifyPreloadedImages = "NeverVerifyPreloadedImages"
	// NeverVerifyAllowlistedImages: only the images of the allowlist
	// (preloadedImagesVerificationAllowlist) go unverified.
	NeverVerifyAllowlistedImages = "NeverVerifyAllowlistedImages"
	// AlwaysVerify: every image is verified, preloaded ones too.
	AlwaysVerify = "AlwaysVerify"

	DefaultPolicy = NeverVerifyPreloadedImages
)

var (
	// ErrUnknownPolicy: a policy name none of the four.
	ErrUnknownPolicy = errors.New("unknown image pull credentials verification policy")
	// ErrBadPattern: an allowlist entry that is not an image name without
	// tag or digest, or a prefix ending in "/*".
	ErrBadPattern = errors.New("invalid image pattern")
	// ErrAllowlistUnused: an allowlist given with a policy other than
	// NeverVerifyAllowlistedImages, which alone reads it.
	ErrAllowlistUnused = errors.New("an allowlist is read only by " + NeverVerifyAllowlistedImages)
)

// Policy is a verification policy with its allowlist compiled.
type Policy struct {
	name string
	// exact are full repository names; prefixes end in "/".
	exact    map[string]bool
	prefixes []string
}

// NewPolicy validates a policy name and its allowlist as the kubelet's
// configuration validation does. An empty name is the default.
func NewPolicy(name string, allowlist []string) (*Policy, error) {
	if name == "" {
		name = DefaultPolicy
	}
	switch name {
	case NeverVerify, NeverVerifyPreloadedImages, NeverVerifyAllowlistedImages, AlwaysVerify:
	default:
		return nil, fmt.Errorf("%w %q: valid options are %q, %q, %q or %q", ErrUnknownPolicy, name,
			NeverVerify, NeverVerifyPreloadedImages, NeverVerifyAllowlistedImages, AlwaysVerify)
	}
	if len(allowlist) > 0 && name != NeverVerifyAllowlistedImages {
		return nil, fmt.Errorf("%w, the policy is %s", ErrAllowlistUnused, name)
	}
	p := &Policy{name: name, exact: map[string]bool{}}
	for _, pattern := range allowlist {
		prefix, wildcard, err := parsePattern(pattern)
		if err != nil {
			return nil, err
		}
		if wildcard {
			p.prefixes = append(p.prefixes, prefix)
		} else {
			p.exact[prefix] = true
		}
	}
	return p, nil
}

func (p *Policy) String() string { return p.name }

// parsePattern reads one allowlist entry: a repository as its normalized
// name ("docker.io/library/busybox", no tag or digest), or a prefix of
// whole path segments ending in "/*" ("registry.example.com/team/*").
// It returns the name, or the prefix with its trailing "/".
func parsePattern(pattern string) (string, bool, error) {
	bad := func(why string) (string, bool, error) {
		return "", false, fmt.Errorf("%w %q: %s", ErrBadPattern, pattern, why)
	}
	if pattern != strings.TrimSpace(pattern) {
		return bad("leading or trailing spaces are not allowed")
	}
	trimmed, wildcard := strings.CutSuffix(pattern, "*")
	if wildcard && !strings.HasSuffix(trimmed, "/") {
		return bad("only a trailing full path segment wildcard '/*' is allowed")
	}
	switch {
	case trimmed == "":
		return bad("the pattern is empty")
	case strings.Contains(trimmed, "*"):
		return bad("only a trailing full path segment wildcard '/*' is allowed")
	case wildcard && trimmed == "/":
		return bad("at least the registry hostname is required")
	case wildcard:
		return trimmed, true, nil
	}
	ref, err := credentials.ParseReference(trimmed)
	if err != nil {
		return bad(fmt.Sprintf("not an image name: %v", err))
	}
	if ref.Repository() != trimmed {
		return bad(fmt.Sprintf("want the full image name without tag or digest (%s)", ref.Repository()))
	}
	return trimmed, false, nil
}

// exempts reports whether the policy lets any pod use an image of repo
// (its normalized name) without looking at credentials. pulledByKubelet:
// the node agent pulled it, or a pull of it is or was under way;
// inRepo: the image is known under repo (see Facts.InRepository).
func (p *Policy) exempts(repo string, pulledByKubelet, inRepo bool) bool {
	switch {
	case p.name == NeverVerify:
		return true
	case !inRepo:
		return false
	case p.name == NeverVerifyPreloadedImages:
		return !pulledByKubelet
	case p.name == NeverVerifyAllowlistedImages:
		// As the kubelet: an allowlisted image is exempt however it came
		// to the node.
		if p.exact[repo] {
			return true
		}
		for _, prefix := range p.prefixes {
			if strings.HasPrefix(repo, prefix) {
				return true
			}
		}
	}
	return false
}
