package sources

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/podline/podline/internal/podtest"
)

// manifestServer serves whatever status and body the test sets, and records
// the headers of the last request.
type manifestServer struct {
	mu       sync.Mutex
	status   int
	body     string
	header   http.Header
	host     string
	requests int
}

func (s *manifestServer) set(status int, body string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.status, s.body = status, body
}

func (s *manifestServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.header, s.host = r.Header.Clone(), r.Host
	s.requests++
	w.WriteHeader(s.status)
	w.Write([]byte(s.body))
}

func newURLHarness(t *testing.T, header http.Header, period time.Duration) (*manifestServer, *URLSource, *Merger, *podtest.LogBuffer) {
	t.Helper()
	srv := &manifestServer{status: http.StatusOK}
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	log, logs := bufferLogger()
	m := NewMerger(log, HTTPSource)
	t.Cleanup(m.Close)
	return srv, NewURLSource(hs.URL+"/pods", header, "node1", period, m, log), m, logs
}

func TestURLSource(t *testing.T) {
	header, err := ParseHeaders([]string{"X-Token: secret", "X-Multi:a", "X-Multi:b", "Host: manifests.example"})
	if err != nil {
		t.Fatal(err)
	}
	srv, src, m, logs := newURLHarness(t, header, time.Hour)
	ctx := context.Background()
	errorsBefore := httpManifestErrors.Get()

	srv.set(http.StatusOK, podYAML("web", "nginx:1")+"---\n"+podYAML("db", "postgres:17"))
	src.sync(ctx)
	got := expect(t, m, "ADD http [default/db-node1 default/web-node1]")
	if got[0].Pods[1].Annotations[ConfigSourceAnnotation] != HTTPSource {
		t.Fatalf("annotations %v", got[0].Pods[1].Annotations)
	}
	if srv.header.Get("X-Token") != "secret" || strings.Join(srv.header.Values("X-Multi"), ",") != "a,b" || srv.host != "manifests.example" {
		t.Fatalf("request headers %v host %q", srv.header, srv.host)
	}

	// The same body again: fetched, but nothing to do.
	src.sync(ctx)
	expect(t, m)
	if srv.requests != 2 {
		t.Fatalf("%d requests", srv.requests)
	}

	// A failing server keeps the last good set.
	srv.set(http.StatusInternalServerError, "oops")
	src.sync(ctx)
	expect(t, m)
	if err := src.Err(); !errors.Is(err, ErrFetch) || !strings.Contains(err.Error(), src.url+": status 500") {
		t.Fatalf("Err() = %v", err)
	}
	// So does a bad manifest, reported with URL and field.
	srv.set(http.StatusOK, podYAML("web", "nginx:1")+"---\n"+strings.Replace(podYAML("db", "x"), "    image: x\n", "", 1))
	src.sync(ctx)
	expect(t, m)
	want := src.url + `: pod "db": spec.containers[0].image: Required value`
	if err := src.Err(); err == nil || err.Error() != want {
		t.Fatalf("Err() = %v, want %q", err, want)
	}
	if line := strconv.Quote(want); !strings.Contains(logs.String(), "level=ERROR") || !strings.Contains(logs.String(), line[1:len(line)-1]) {
		t.Fatalf("log lacks %q:\n%s", want, logs)
	}
	src.sync(ctx) // the same bad body: still reported
	if err := src.Err(); err == nil || err.Error() != want {
		t.Fatalf("Err() after the same bad body = %v", err)
	}
	if n := httpManifestErrors.Get() - errorsBefore; n != 2 {
		t.Fatalf("error metric moved by %d, want 2 (the repeat costs no decoding)", n)
	}

	// Back to a changed good body.
	srv.set(http.StatusOK, podYAML("web", "nginx:1"))
	src.sync(ctx)
	expect(t, m, "REMOVE http [default/db-node1]")
	if err := src.Err(); err != nil {
		t.Fatalf("Err() after recovery: %v", err)
	}

	// An empty body is an empty set.
	srv.set(http.StatusOK, "")
	src.sync(ctx)
	expect(t, m, "REMOVE http [default/web-node1]")
}

func TestURLSourceFirstFetchFails(t *testing.T) {
	srv, src, m, _ := newURLHarness(t, nil, time.Hour)
	srv.set(http.StatusNotFound, "")
	src.sync(context.Background())
	expect(t, m)
	if m.SeenAll() {
		t.Fatal("a source that never answered counts as seen")
	}
}

func TestURLSourceRun(t *testing.T) {
	srv, src, m, _ := newURLHarness(t, nil, 50*time.Millisecond)
	srv.set(http.StatusOK, podYAML("web", "nginx:1"))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		src.Run(ctx)
		close(done)
	}()
	defer func() {
		cancel()
		<-done
	}()
	if u := recv(t, m, 2*time.Second); describe(u) != "ADD http [default/web-node1]" {
		t.Fatalf("first: %s", describe(u))
	}
	srv.set(http.StatusOK, podYAML("web", "nginx:2"))
	if u := recv(t, m, 2*time.Second); u.Op != REMOVE {
		t.Fatalf("after change: %s", describe(u))
	}
	if u := recv(t, m, 2*time.Second); u.Op != ADD || u.Pods[0].Spec.Containers[0].Image != "nginx:2" {
		t.Fatalf("after change: %s", describe(u))
	}
}

func TestParseHeaders(t *testing.T) {
	h, err := ParseHeaders([]string{"a:1", " b : two words ", "Auth:Bearer x:y", "a:2", "empty:"})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(h.Values("A"), ","); got != "1,2" {
		t.Errorf("a = %q", got)
	}
	if h.Get("B") != "two words" || h.Get("Auth") != "Bearer x:y" || len(h.Values("Empty")) != 1 {
		t.Errorf("headers %v", h)
	}
	for _, bad := range []string{"novalue", ":v", "bad key:v"} {
		if _, err := ParseHeaders([]string{bad}); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
