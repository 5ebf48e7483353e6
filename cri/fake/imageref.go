package fake

import "strings"

// normalizeRef expands a short image reference the way containerd's CRI
// plugin resolves it: "busybox:1.36" is "docker.io/library/busybox:1.36",
// and a reference with neither tag nor digest means ":latest". Image ids
// ("sha256:...") are returned unchanged.
func normalizeRef(ref string) string {
	if ref == "" || strings.HasPrefix(ref, "sha256:") {
		return ref
	}
	name, digest, hasDigest := strings.Cut(ref, "@")
	domain, rest := "docker.io", name
	if first, after, ok := strings.Cut(name, "/"); ok && (strings.ContainsAny(first, ".:") || first == "localhost") {
		domain, rest = first, after
	}
	if domain == "docker.io" && !strings.Contains(rest, "/") {
		rest = "library/" + rest
	}
	out := domain + "/" + rest
	lastPart := rest[strings.LastIndex(rest, "/")+1:]
	if !hasDigest && !strings.Contains(lastPart, ":") {
		out += ":latest"
	}
	if hasDigest {
		out += "@" + digest
	}
	return out
}
