package server

import (
	"fmt"
	"net/http"
	"strings"
)

// Check is one named health check; nil means healthy.
type Check struct {
	Name  string
	Check func() error
}

// Healthz answers /healthz with "ok" when every check passes, and a 500
// naming the failed checks otherwise. "?verbose" lists every check.
func Healthz(checks ...Check) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var b strings.Builder
		failed := false
		for _, c := range checks {
			if err := c.Check(); err != nil {
				failed = true
				fmt.Fprintf(&b, "[-]%s failed: %v\n", c.Name, err)
			} else {
				fmt.Fprintf(&b, "[+]%s ok\n", c.Name)
			}
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		switch {
		case failed:
			w.WriteHeader(http.StatusInternalServerError)
			fmt.Fprintf(w, "%shealthz check failed\n", b.String())
		case r.URL.Query().Has("verbose"):
			fmt.Fprintf(w, "%shealthz check passed\n", b.String())
		default:
			fmt.Fprint(w, "ok")
		}
	})
}
