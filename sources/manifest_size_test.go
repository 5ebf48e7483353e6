package sources

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// hugeBytes is the size of the manifests these tests offer: ten times the
// cap, as a runaway generator or a hostile server would.
const hugeBytes = 100 << 20

// allocated runs fn and returns the bytes the process allocated meanwhile.
func allocated(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// hugeManifestChunk is a piece of a PodList that could go on for ever.
var hugeManifestChunk = []byte(strings.Repeat("- metadata: {name: p}\n  spec: {containers: [{name: c, image: busybox}]}\n", 1024))

// writeHuge writes n bytes of PodList to path: real bytes, not a sparse
// file, so that reading it would cost what a real one costs.
func writeHuge(t *testing.T, path string, n int) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	f.WriteString("apiVersion: v1\nkind: PodList\nitems:\n")
	for written := 0; written < n; written += len(hugeManifestChunk) {
		if _, err := f.Write(hugeManifestChunk); err != nil {
			t.Fatal(err)
		}
	}
}

// TestManifestFileTooLarge: a 100 MiB file in the manifest directory is
// refused by its size, unread, with an error naming the file and the cap;
// the manifest next to it still loads.
func TestManifestFileTooLarge(t *testing.T) {
	h := newFileHarness(t, t.TempDir(), 0)
	huge := filepath.Join(h.dir, "huge.yaml")
	writeHuge(t, huge, hugeBytes)
	h.write("web.yaml", podYAML("web", "nginx:1.27"))

	// Reading even the first MiB of it would allocate more than that.
	alloc := allocated(func() { h.src.load(huge) })
	if alloc > maxManifestBytes/2 {
		t.Errorf("loading a 100 MiB manifest allocated %d bytes; it should not read it", alloc)
	}
	h.src.scan(statAll)
	err := h.src.Errors()[huge]
	if err == nil || !errors.Is(err, ErrFetch) || !strings.Contains(err.Error(), huge) || !strings.Contains(err.Error(), "1 MiB") {
		t.Fatalf("error for %s: %v; want ErrFetch naming the file and the 1 MiB cap", huge, err)
	}
	ups := queued(h.m) // scan delivers before it returns
	if len(ups) != 1 || ups[0].Op != ADD || len(ups[0].Pods) != 1 || ups[0].Pods[0].Name != "web-node1" {
		t.Fatalf("the good manifest next to the huge one: %v", ups)
	}
}

// hugeServer answers with 100 MiB of PodList, with a Content-Length or
// chunked (no length known until it ends).
func hugeServer(t *testing.T, withLength bool) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if withLength {
			w.Header().Set("Content-Length", strconv.Itoa(hugeBytes))
		}
		w.Write([]byte("apiVersion: v1\nkind: PodList\nitems:\n"))
		for written := 0; written < hugeBytes; written += len(hugeManifestChunk) {
			chunk := hugeManifestChunk[:min(len(hugeManifestChunk), hugeBytes-written)]
			if _, err := w.Write(chunk); err != nil {
				return // the client hung up: what it should do
			}
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/pods"
}

// TestManifestURLTooLarge: a 100 MiB --manifest-url body is refused by its
// Content-Length unread, or, chunked, after reading no more than the cap;
// either way with an error naming the URL and the cap, and the pods of the
// last good body stay.
func TestManifestURLTooLarge(t *testing.T) {
	f := func(withLength bool, maxAlloc uint64) {
		t.Helper()
		good := []byte(podYAML("web", "nginx:1.27"))
		huge := hugeServer(t, withLength)
		m := NewMerger(discardLogger(), HTTPSource)
		defer m.Close()
		s := NewURLSource(huge, nil, "node1", 0, m, discardLogger())
		s.client.Transport = &bodyTransport{status: http.StatusOK, body: good}
		s.sync(context.Background())
		if ups := queued(m); len(ups) != 1 || ups[0].Op != ADD {
			t.Fatalf("good body: %v %v", ups, s.Err())
		}

		s.client.Transport = http.DefaultTransport
		alloc := allocated(func() { s.sync(context.Background()) })
		if alloc > maxAlloc {
			t.Errorf("Content-Length %v: fetching a 100 MiB body allocated %d bytes, want at most %d", withLength, alloc, maxAlloc)
		}
		err := s.Err()
		if err == nil || !errors.Is(err, ErrFetch) || !strings.HasPrefix(err.Error(), huge+": ") || !strings.Contains(err.Error(), "1 MiB") {
			t.Fatalf("Content-Length %v: error %v; want ErrFetch naming the URL and the 1 MiB cap", withLength, err)
		}
		if ups := queued(m); len(ups) != 0 {
			t.Fatalf("Content-Length %v: a refused body changed the pods: %v", withLength, ups)
		}
	}
	f(true, 1<<20)
	// Chunked, the body is read up to the cap: the buffer's growth to it
	// and the HTTP client's own, well under the 100 MiB sent. The count is
	// the whole process's, so other tests' goroutines add to it.
	f(false, 16*maxManifestBytes)
}

// TestBodyTransportIsInMemory keeps the fuzz transport honest: what it
// serves is what the source reads.
func TestBodyTransportIsInMemory(t *testing.T) {
	req, _ := http.NewRequest(http.MethodGet, "http://x.invalid/", nil)
	resp, err := (&bodyTransport{status: 200, body: []byte("abc")}).RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	b.ReadFrom(resp.Body)
	if b.String() != "abc" || resp.StatusCode != 200 {
		t.Fatalf("%d %q", resp.StatusCode, b.String())
	}
}

// TestManifestAtCapBounded: a manifest just under the byte cap, of the
// smallest pods YAML can write, is refused by its pod count before the
// pods are decoded, at a bounded cost.
func TestManifestAtCapBounded(t *testing.T) {
	var b bytes.Buffer
	b.WriteString("apiVersion: v1\nkind: PodList\nitems:\n")
	for b.Len()+len(hugeManifestChunk) < maxManifestBytes {
		b.Write(hugeManifestChunk)
	}
	var err error
	alloc := allocated(func() { _, err = loadStatic(b.Bytes(), FileSource, "/m.yaml", "node1") })
	if !errors.Is(err, ErrDecode) || !strings.Contains(err.Error(), "more than 1000 pods") {
		t.Fatalf("%d bytes of %d-pod PodList: %v; want a refusal by pod count", b.Len(), bytes.Count(b.Bytes(), []byte("- metadata")), err)
	}
	t.Logf("%d bytes of YAML refused after %d MiB allocated", b.Len(), alloc>>20)
	if alloc > 256<<20 {
		t.Errorf("refusing a %d-byte manifest allocated %d MiB", b.Len(), alloc>>20)
	}
}
