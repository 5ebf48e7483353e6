package sources

import (
	"fmt"
	"net/http"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

// ParseHeaders reads --manifest-url-header entries of the form "key:value".
// The value is everything after the first ':' (so it may contain ':'),
// both sides are trimmed, and a repeated key adds another value. Splitting
// a flag value into entries is the flag parser's business.
func ParseHeaders(entries []string) (http.Header, error) {
	h := make(http.Header, len(entries))
	for _, e := range entries {
		k, v, ok := strings.Cut(e, ":")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if !ok || k == "" {
			return nil, fmt.Errorf("manifest URL header %q: want key:value", e)
		}
		if msgs := validation.IsHTTPHeaderName(k); len(msgs) > 0 {
			return nil, fmt.Errorf("manifest URL header %q: %s", e, strings.Join(msgs, "; "))
		}
		h.Add(k, v)
	}
	return h, nil
}
