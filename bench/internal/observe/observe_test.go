package observe

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestPods(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/pods":
			io.WriteString(w, `{"kind":"PodList","items":[
{"metadata":{"name":"a-n","uid":"1"},"status":{"phase":"Running","containerStatuses":[{"containerID":"fake://x","state":{"running":{"startedAt":"2026-01-01T00:00:00Z"}}}]}},
{"metadata":{"name":"b-n","uid":"2"},"status":{"phase":"Pending","containerStatuses":[{"state":{"waiting":{"reason":"ContainerCreating"}}}]}},
{"metadata":{"name":"c-n","uid":"3"},"status":{"phase":"Running","containerStatuses":[{"containerID":"fake://y","state":{"terminated":{"exitCode":3}}}]}}]}`)
		case "/metrics":
			io.WriteString(w, "go_goroutines 7\n")
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	c := New(srv.URL)
	defer c.Close()
	pods, at, err := c.Pods(context.Background())
	if err != nil || at.IsZero() {
		t.Fatalf("Pods: %v (at %v)", err, at)
	}
	want := []struct {
		name             string
		running, stopped bool
	}{{"a-n", true, false}, {"b-n", false, false}, {"c-n", false, true}}
	if len(pods) != len(want) {
		t.Fatalf("%d pods, want %d", len(pods), len(want))
	}
	for i, w := range want {
		p := pods[i]
		if p.Metadata.Name != w.name || p.Running() != w.running || p.Terminated() != w.stopped {
			t.Errorf("pod %d: %s running=%v terminated=%v; want %+v", i, p.Metadata.Name, p.Running(), p.Terminated(), w)
		}
	}
	body, err := c.Metrics(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(body)
	body.Close()
	if string(b) != "go_goroutines 7\n" {
		t.Fatalf("metrics body %q", b)
	}
	c.URL = srv.URL + "/missing"
	if _, _, err := c.Pods(context.Background()); err == nil {
		t.Fatal("Pods on a 404 returned no error")
	}
}

func TestLogTail(t *testing.T) {
	p := filepath.Join(t.TempDir(), "log")
	var b strings.Builder
	for i := range 5000 { // well past the 16 KiB window
		b.WriteString("line ")
		b.WriteString(strings.Repeat("x", i%7))
		b.WriteString("\n")
	}
	b.WriteString("E1121 command failed err=\"boom\"\n")
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	got := LogTail(p, 3)
	lines := strings.Split(got, "\n")
	if len(lines) != 3 || lines[2] != `E1121 command failed err="boom"` {
		t.Errorf("LogTail = %q, want 3 lines ending with the error", got)
	}
	if !strings.Contains(LogTail(filepath.Join(t.TempDir(), "none"), 3), "no log") {
		t.Errorf("LogTail of a missing file should say so")
	}
}
