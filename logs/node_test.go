package logs

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// nodeLogDir lays out a /var/log next to an /etc that must stay out of
// reach, with the links a pod could plant through a hostPath volume.
func nodeLogDir(t *testing.T) string {
	t.Helper()
	top := t.TempDir()
	root, etc := filepath.Join(top, "log"), filepath.Join(top, "etc")
	for _, d := range []string{filepath.Join(root, "pods", "ns_pod_uid"), etc} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	files := map[string]string{
		filepath.Join(etc, "shadow"):                   "root:secret",
		filepath.Join(root, "syslog"):                  "node log\n",
		filepath.Join(root, "pods", "ns_pod_uid", "a"): "pod log\n",
	}
	for name, data := range files {
		if err := os.WriteFile(name, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	links := map[string]string{
		filepath.Join(root, "etc-abs"):                 etc,
		filepath.Join(root, "etc-rel"):                 "../etc",
		filepath.Join(root, "pods", "ns_pod_uid", "x"): "../../../etc/shadow",
		filepath.Join(root, "proc"):                    "/proc/self/root/etc",
		filepath.Join(root, "latest"):                  "pods/ns_pod_uid",
	}
	for name, target := range links {
		if err := os.Symlink(target, name); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Mkfifo(filepath.Join(root, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	return root
}

func TestNodeLogs(t *testing.T) {
	root := nodeLogDir(t)
	// Mounted as the server mounts it.
	mux := http.NewServeMux()
	mux.Handle("GET /logs/", http.StripPrefix("/logs", NodeLogs(root)))
	f := func(method, path string, code int, body string) {
		t.Helper()
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, httptest.NewRequest(method, path, nil))
		if rec.Code != code || !strings.Contains(rec.Body.String(), body) {
			t.Errorf("%s %s = %d %q, want %d with %q", method, path, rec.Code, rec.Body, code, body)
		}
		if strings.Contains(rec.Body.String(), "secret") {
			t.Errorf("%s %s gave away /etc", method, path)
		}
	}
	f("GET", "/logs/", 200, `<a href="pods/">pods/</a>`)
	f("GET", "/logs/", 200, `<a href="syslog">syslog</a>`)
	f("GET", "/logs/syslog", 200, "node log\n")
	f("GET", "/logs/pods/ns_pod_uid/a", 200, "pod log\n")
	f("GET", "/logs/pods/ns_pod_uid/", 200, `<a href="a">a</a>`)
	f("GET", "/logs/pods", 301, "")
	// Links that stay inside are followed.
	f("GET", "/logs/latest/a", 200, "pod log\n")
	f("GET", "/logs/missing", 404, "no such file")
	f("GET", "/logs/fifo", 403, "not a regular file: a named pipe")
	// Every way out is refused, saying why.
	f("GET", "/logs/etc-abs/shadow", 403, "leaves the node's log directory")
	f("GET", "/logs/etc-abs", 403, "leaves the node's log directory")
	f("GET", "/logs/etc-rel/shadow", 403, "leaves the node's log directory")
	f("GET", "/logs/pods/ns_pod_uid/x", 403, "leaves the node's log directory")
	f("GET", "/logs/proc/shadow", 403, "leaves the node's log directory")
	f("GET", "/logs/%2e%2e/etc/shadow", 403, "leaves the node's log directory")

	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, httptest.NewRequest("GET", "/logs/pods", nil))
	if loc := rec.Header().Get("Location"); loc != "pods/" {
		t.Errorf("GET /logs/pods redirects to %q, want pods/", loc)
	}
	req := httptest.NewRequest("GET", "/logs/syslog", nil)
	req.Header.Set("Range", "bytes=5-")
	rec = httptest.NewRecorder()
	mux.ServeHTTP(rec, req)
	if rec.Code != http.StatusPartialContent || rec.Body.String() != "log\n" {
		t.Errorf("GET /logs/syslog bytes=5- = %d %q", rec.Code, rec.Body)
	}
}

func TestNodeLogsUnmounted(t *testing.T) {
	// Without a mux in front no one cleans the path: ".." reaches the
	// handler as it is.
	h := NodeLogs(nodeLogDir(t))
	f := func(method, path string, code int) {
		t.Helper()
		req := httptest.NewRequest(method, "/", nil)
		req.URL.Path = path
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != code || strings.Contains(rec.Body.String(), "secret") {
			t.Errorf("%s %q = %d %q, want %d", method, path, rec.Code, rec.Body, code)
		}
	}
	f("GET", "/../etc/shadow", 403)
	f("GET", "../etc/shadow", 403)
	f("GET", "/pods/../../etc/shadow", 403)
	f("GET", "/pods/./../syslog", 403)
	// As StripPrefix("/logs/") leaves it, the kubelet's way.
	f("GET", "", 200)
	f("GET", "syslog", 200)
	f("GET", "/syslog\x00", 400)
	f("HEAD", "/syslog", 200)
	f("POST", "/syslog", 405)
}
