package server

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// fakeCheckpointer writes an archive where it is told, or fails with err.
type fakeCheckpointer struct {
	id      string
	timeout time.Duration
	err     error
}

func (f *fakeCheckpointer) CheckpointContainer(_ context.Context, id, location string, timeout time.Duration) error {
	f.id, f.timeout = id, timeout
	if f.err != nil {
		return f.err
	}
	return os.WriteFile(location, []byte("archive"), 0o600)
}

func post(h http.Handler, path string) (int, string) {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, path, nil))
	return rec.Code, rec.Body.String()
}

func TestCheckpoint(t *testing.T) {
	s, _, _ := newSecure(t)
	cp := &fakeCheckpointer{}
	s.Checkpointer, s.CheckpointDir = cp, filepath.Join(t.TempDir(), "checkpoints")
	h := s.Handler()

	code, body := post(h, "/checkpoint/default/web/app?timeout=30")
	if code != 200 {
		t.Fatalf("POST = %d %q", code, body)
	}
	var answer struct{ Items []string }
	if err := json.Unmarshal([]byte(body), &answer); err != nil || len(answer.Items) != 1 {
		t.Fatalf("answer %q: %v", body, err)
	}
	path := answer.Items[0]
	name := regexp.MustCompile(`^checkpoint-web_default-app-\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(Z|[+-]\d\d:\d\d)\.tar$`)
	if filepath.Dir(path) != s.CheckpointDir || !name.MatchString(filepath.Base(path)) {
		t.Errorf("archive %s, want checkpoint-<pod>_<namespace>-<container>-<time>.tar in %s", path, s.CheckpointDir)
	}
	if _, err := os.Stat(path); err != nil {
		t.Errorf("no archive: %v", err)
	}
	if st, err := os.Stat(s.CheckpointDir); err != nil || st.Mode().Perm() != 0o700 {
		t.Errorf("checkpoint directory: %v %v, want 0700", st.Mode().Perm(), err)
	}
	if cp.id != "cid-app" || cp.timeout != 30*time.Second {
		t.Errorf("runtime asked for %q within %v", cp.id, cp.timeout)
	}

	for _, tc := range []struct {
		path string
		code int
		want string
	}{
		{"/checkpoint/default/web/app?timeout=soon", 400, `timeout "soon"`},
		{"/checkpoint/default/web/app?timeout=-1", 400, "timeout"},
		{"/checkpoint/default/nope/app", 404, "does not exist"},
		{"/checkpoint/default/web/other", 404, "not valid for pod"},
	} {
		if code, body := post(h, tc.path); code != tc.code || !strings.Contains(body, tc.want) {
			t.Errorf("POST %s = %d %q, want %d with %q", tc.path, code, body, tc.code, tc.want)
		}
	}
	if code, _ := get(t, h, "/checkpoint/default/web/app"); code != http.StatusMethodNotAllowed {
		t.Errorf("GET = %d, want 405", code)
	}

	cp.err = errors.New("CRIU binary not found")
	if code, body := post(h, "/checkpoint/default/web/app"); code != 500 ||
		!strings.Contains(body, "checkpointing of default/web/app failed (CRIU binary not found)") {
		t.Errorf("runtime failure: %d %q", code, body)
	}

	s.Debugging = false
	if code, _ := post(s.Handler(), "/checkpoint/default/web/app"); code != http.StatusMethodNotAllowed {
		t.Errorf("without debugging handlers: %d, want 405", code)
	}
}
