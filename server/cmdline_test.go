package server

import (
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
)

// /debug/pprof/cmdline needs only the proxy permission: it serves the
// command line podline was given with its credentials redacted, never
// os.Args, in pprof's format (NUL-separated).
func TestPprofCmdlineIsRedacted(t *testing.T) {
	old := os.Args
	t.Cleanup(func() { os.Args = old })
	os.Args = []string{"podline", "--manifest-url-header=Authorization:Bearer s3cret"}

	s, _, _ := newSecure(t)
	code, body := get(t, s.Handler(), "/debug/pprof/cmdline")
	if code != http.StatusOK || body != "podline" {
		t.Errorf("without a command line: %d %q, want the program's name alone", code, body)
	}

	s.Cmdline = []string{"podline", "--manifest-url-header=Authorization:<redacted>", "--max-pods", "250"}
	rec := httptest.NewRecorder()
	s.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/debug/pprof/cmdline", nil))
	if got := rec.Body.String(); rec.Code != http.StatusOK || got != strings.Join(s.Cmdline, "\x00") {
		t.Errorf("GET /debug/pprof/cmdline = %d %q, want the given command line NUL-separated", rec.Code, got)
	}
	if ct := rec.Header().Get("Content-Type"); ct != "text/plain; charset=utf-8" {
		t.Errorf("Content-Type %q, want pprof's", ct)
	}

	s.Debugging = false
	if code, _ := get(t, s.Handler(), "/debug/pprof/cmdline"); code != http.StatusMethodNotAllowed {
		t.Errorf("with the debugging handlers off: %d, want 405", code)
	}
}
