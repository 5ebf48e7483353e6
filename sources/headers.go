package sources

import (
	"fmt"
	"net/http"
	"strings"

	"golang.org/x/net/http/httpguts"
	"k8s.io/apimachinery/pkg/util/validation"
)

// ParseHeaders reads --manifest-url-header entries of the form "key:value".
// The value is everything after the first ':' (so it may contain ':'),
// both sides are trimmed, and a repeated key adds another value. Splitting
// a flag value into entries is the flag parser's business. An error names
// the entry by its place (entry 2), never by its text: the value is a
// credential, and an entry without ':' may be a value given alone.
func ParseHeaders(entries []string) (http.Header, error) {
	h := make(http.Header, len(entries))
	for i, e := range entries {
		k, v, err := ParseHeader(e)
		if err != nil {
			return nil, fmt.Errorf("manifest URL header entry %d: %w", i+1, err)
		}
		h.Add(k, v)
	}
	return h, nil
}

// ParseHeader reads one "key:value" entry, trimmed on both sides. Its
// errors never quote the value.
func ParseHeader(entry string) (key, value string, err error) {
	k, v, ok := strings.Cut(entry, ":")
	k, v = strings.TrimSpace(k), strings.TrimSpace(v)
	if !ok || k == "" {
		return "", "", fmt.Errorf("want key:value")
	}
	if msgs := validation.IsHTTPHeaderName(k); len(msgs) > 0 {
		// The name is not quoted either: with no ':' where the writer
		// meant one, it may hold the value.
		return "", "", fmt.Errorf("the key is no HTTP header name: %s", strings.Join(msgs, "; "))
	}
	if !httpguts.ValidHeaderFieldValue(v) {
		return "", "", fmt.Errorf("header %s: the value holds a control character", k)
	}
	return k, v, nil
}
