package sources

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
)

// bodyTransport answers every request with status and body, in memory, so
// a fuzz execution costs no socket.
type bodyTransport struct {
	status int
	body   []byte
}

func (b *bodyTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	return &http.Response{
		StatusCode: b.status, Status: http.StatusText(b.status), Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: http.Header{}, Body: io.NopCloser(bytes.NewReader(b.body)), ContentLength: -1, Request: r,
	}, nil
}

// FuzzURLBody serves a --manifest-url body after a good one and holds the
// URL source to its contract: a bad body fails with an error that names
// the URL and leaves the pods of the good body in place (no update at all);
// a good body replaces them with valid static pods; the same body fetched
// again changes nothing and reports the same error.
func FuzzURLBody(f *testing.F) {
	f.Add([]byte(podYAML("other", "nginx:1.27")))
	f.Add([]byte(""))
	f.Add([]byte(`{"apiVersion":"v1","kind":"PodList","items":[{"metadata":{"name":"a"},"spec":{"containers":[{"name":"c","image":"i"}]}}]}`))
	f.Add([]byte("apiVersion: v1\nkind: Pod\nmetadata:\n  name: \xff\xfe\n"))
	f.Fuzz(func(t *testing.T, body []byte) {
		const url = "http://manifests.invalid/node-1/pods"
		tr := &bodyTransport{status: http.StatusOK, body: []byte(podYAML("good", "busybox:1.36"))}
		m := NewMerger(discardLogger(), HTTPSource)
		defer m.Close()
		s := NewURLSource(url, nil, "node-1", 0, m, discardLogger())
		s.client.Transport = tr
		ctx := context.Background()

		s.sync(ctx)
		good := queued(m)
		if s.Err() != nil || len(good) != 1 || good[0].Op != ADD || len(good[0].Pods) != 1 {
			t.Fatalf("good body: err %v, updates %v", s.Err(), good)
		}
		goodUID := good[0].Pods[0].UID

		tr.body = body
		s.sync(ctx)
		ups := queued(m)
		err := s.Err()
		if err != nil {
			if !strings.HasPrefix(err.Error(), url+": ") || !(errors.Is(err, ErrDecode) || errors.Is(err, ErrInvalid) || errors.Is(err, ErrFetch)) {
				t.Fatalf("error %q does not name the URL or has no class", err)
			}
			if len(ups) != 0 {
				t.Fatalf("a bad body changed the pods: %v", ups)
			}
		} else {
			checkURLUpdates(t, ups, body, goodUID)
		}

		// The same body again: skipped by its hash, the same verdict.
		s.sync(ctx)
		if again := queued(m); len(again) != 0 {
			t.Fatalf("the same body fetched again emitted %v", again)
		}
		if (err == nil) != (s.Err() == nil) || (err != nil && err.Error() != s.Err().Error()) {
			t.Fatalf("the same body fetched again: error %v, first %v", s.Err(), err)
		}
	})
}

// checkURLUpdates checks what a good body emitted after the first one.
func checkURLUpdates(t *testing.T, ups []Update, body []byte, goodUID any) {
	t.Helper()
	for _, u := range ups {
		if u.Source != HTTPSource {
			t.Fatalf("update from %q", u.Source)
		}
		for _, p := range u.Pods {
			if u.Op == REMOVE {
				if p.UID != goodUID {
					t.Fatalf("removed %s, which was never added", p.UID)
				}
				continue
			}
			if errs := Validate(p); len(errs) > 0 {
				t.Fatalf("%s of an invalid pod: %v", u.Op, errs)
			}
			if p.Annotations[ConfigSourceAnnotation] != HTTPSource || p.Spec.NodeName != "node-1" {
				t.Fatalf("%s of a pod that is not static: %v", u.Op, p.Annotations)
			}
		}
	}
	if len(bytes.TrimSpace(body)) == 0 {
		// No pods: the good one is removed.
		if len(ups) != 1 || ups[0].Op != REMOVE {
			t.Fatalf("empty body emitted %v", ups)
		}
	}
}

// queued returns the updates already queued: Set sends before it returns.
func queued(m *Merger) []Update {
	var out []Update
	for len(m.Updates()) > 0 {
		out = append(out, <-m.Updates())
	}
	return out
}
