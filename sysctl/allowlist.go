package sysctl

import (
	"fmt"
	"regexp"
	"strings"
)

// maxNameLength is the longest sysctl name or pattern the API accepts.
const maxNameLength = 253

// patternFormat is a sysctl name whose last segment may end in '*';
// segments are separated by '.' or '/'. It is quoted in the error for a
// bad pattern, as the kubelet quotes it.
const patternFormat = `([a-z0-9]([-_a-z0-9]*[a-z0-9])?[\./])*([a-z0-9][-_a-z0-9]*)?[a-z0-9*]`

var patternRegexp = regexp.MustCompile("^" + patternFormat + "$")

// Allowlist is the sysctls pods may set on this node: exact names and
// prefixes (a pattern's text before its '*'), each with its namespace.
// It is read-only once built, so any number of goroutines may use it.
type Allowlist struct {
	names    map[string]Namespace
	prefixes []prefix
}

type prefix struct {
	text string
	ns   Namespace
}

// NewAllowlist allows the safe sysctls of the kernel release and the
// unsafe ones an operator listed (--allowed-unsafe-sysctls: names, or
// patterns ending in '*', in dotted or slash form). A listed sysctl that
// is not known to be namespaced is an error: allowing it would let a pod
// change the node.
func NewAllowlist(kernelRelease string, unsafe []string) (*Allowlist, error) {
	a := &Allowlist{names: make(map[string]Namespace)}
	for _, p := range append(Safe(kernelRelease), unsafe...) {
		if len(p) > maxNameLength || !patternRegexp.MatchString(p) {
			return nil, fmt.Errorf("sysctl %q must have at most %d characters and match regex %s", p, maxNameLength, patternFormat)
		}
		// The form allows a '*' only at the end.
		text, isPrefix := strings.CutSuffix(Normalize(p), "*")
		ns := NamespaceOf(text)
		if ns == NoNamespace {
			return nil, fmt.Errorf("the sysctls %q are not known to be namespaced", text)
		}
		if isPrefix {
			a.prefixes = append(a.prefixes, prefix{text: text, ns: ns})
		} else {
			a.names[text] = ns
		}
	}
	return a, nil
}

// Check returns why a pod may not set the sysctl, or nil. A sysctl of the
// network namespace is refused to a host-network pod and one of the IPC
// namespace to a host-IPC pod, allowed or not: it would set the host's.
// A nil Allowlist allows nothing.
func (a *Allowlist) Check(name string, hostNetwork, hostIPC bool) error {
	if a == nil {
		a = &Allowlist{}
	}
	name = Normalize(name)
	ns, ok := a.names[name]
	for i := 0; !ok && i < len(a.prefixes); i++ {
		if strings.HasPrefix(name, a.prefixes[i].text) {
			ns, ok = a.prefixes[i].ns, true
		}
	}
	switch {
	case !ok:
		return fmt.Errorf("%q not allowlisted", name)
	case ns == IPCNamespace && hostIPC, ns == NetNamespace && hostNetwork:
		return fmt.Errorf("%q not allowed with host %s enabled", name, ns)
	}
	return nil
}
