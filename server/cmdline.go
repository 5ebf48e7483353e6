package server

import (
	"net/http"
	"os"
	"strings"
)

// cmdline serves /debug/pprof/cmdline in net/http/pprof's format (the
// arguments NUL-separated, as text) from args, the command line with its
// credentials redacted. pprof's own handler serves os.Args as they are,
// and the endpoint needs only the proxy permission, which podline keeps
// too weak to exec: a --manifest-url-header would be anyone's who may
// read metrics. A nil args serves the program's name alone.
func cmdline(args []string) http.Handler {
	if args == nil {
		args = os.Args[:1]
	}
	body := strings.Join(args, "\x00")
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Write([]byte(body))
	})
}
