package server

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/podline/podline/machine"
)

// FuzzSecureHandler sends any path and query to the authenticated port's
// handler (with a fake runtime behind it) and holds it to answering: no
// panic, no 5xx, and a 400 for a bad /containerLogs, /exec, /run or
// /portForward query that names the parameter or what is missing.
// /debug/pprof is left out: its profile waits for as long as it is asked.
func FuzzSecureHandler(f *testing.F) {
	f.Add("GET", "/containerLogs/default/web/app", "tailLines=10&sinceSeconds=5&limitBytes=3")
	f.Add("GET", "/containerLogs/default/web/app", "tailLines=-1")
	f.Add("GET", "/containerLogs/default/web/app", "sinceTime=2024-13-01T00:00:00Z")
	f.Add("GET", "/containerLogs/default/web/app", "limitBytes=abc&follow=maybe")
	f.Add("POST", "/exec/default/web/app", "command=ls&stdout=1")
	f.Add("POST", "/exec/default/web/u1/app", "stdin=true")
	f.Add("POST", "/run/default/web/app", "cmd=echo%20hi")
	f.Add("GET", "/portForward/default/web", "port=0&port=70000")
	f.Add("GET", "/pods", "")
	f.Add("GET", "/runningpods/", "")
	f.Add("GET", "/metrics", "")
	f.Add("GET", "/containerLogs/%2e%2e/%00/..", "")
	f.Fuzz(func(t *testing.T, method, path, query string) {
		if method != "GET" && method != "POST" {
			method = "GET"
		}
		if strings.Contains(path, "debug") {
			return
		}
		s := fuzzSecure(t)
		u := &url.URL{Scheme: "http", Host: "node", RawQuery: query}
		if p, err := url.PathUnescape(path); err == nil {
			u.Path, u.RawPath = p, path
		} else {
			u.Path = path
		}
		req, err := http.NewRequest(method, u.String(), nil)
		if err != nil {
			return // not a request a client could send
		}
		ctx, cancel := context.WithTimeout(req.Context(), 5*time.Second)
		defer cancel()
		rec := httptest.NewRecorder()
		s.Handler().ServeHTTP(rec, req.WithContext(ctx))

		body := rec.Body.String()
		if rec.Code >= 500 {
			t.Fatalf("%s %s?%s: %d %q", method, u.Path, query, rec.Code, body)
		}
		if rec.Code != http.StatusBadRequest {
			return
		}
		for _, want := range []string{"tailLines", "tail", "sinceSeconds", "sinceTime", "limitBytes", "follow", "previous",
			"timestamps", "stream", "port", "command", "cmd", "stdin, stdout, stderr", "Upgrade", "log", "previous"} {
			if strings.Contains(body, want) {
				return
			}
		}
		t.Fatalf("%s %s?%s: 400 %q names no parameter", method, u.Path, query, body)
	})
}

// fuzzSecure is Secure over fakes: pod default/web (uid u1) with
// container app, whose log holds two lines and has stopped, so that a
// follow ends at the file's end.
func fuzzSecure(t *testing.T) *Secure {
	t.Helper()
	dir := t.TempDir()
	log := filepath.Join(dir, "0.log")
	content := "2024-01-01T00:00:00.000000001Z stdout F one\n2024-01-01T00:00:01Z stderr F two\n"
	if err := os.WriteFile(log, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return &Secure{
		Locator: &fakeLocator{log: log, running: false}, Streamer: &fakeStreamer{url: "http://127.0.0.1:1/unused"},
		PodLogsDir: dir, Debugging: true, Log: slog.New(slog.DiscardHandler),
		ReadOnly: ReadOnly{
			Pods:    func() []v1.Pod { return nil },
			Machine: func() *machine.Info { return &machine.Info{} },
		},
	}
}
