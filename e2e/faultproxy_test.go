//go:build e2e

package e2e

// faultProxy stands between one podline node and the API server, so a test
// can answer podline's requests with errors the real server would only
// give under load (429 with Retry-After, 500) or after etcd compaction
// (a watch's 410 Expired), and count what podline sends meanwhile.
//
// It terminates TLS with the API server's own serving certificate (issued
// by the cluster CA for 127.0.0.1), so podline's kubeconfig keeps the
// cluster CA and only its server URL changes, and it reaches the API server
// as the node, with the client certificate of the node's kubeconfig: the
// Node authorizer and NodeRestriction see the same identity as without it.

import (
	"bytes"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// proxyRequest is one request podline sent, as the proxy answered it.
type proxyRequest struct {
	at     time.Time
	method string
	path   string
	query  string
	watch  bool
	code   int // what the proxy answered; 0 while a stream still runs
}

// fault is what the proxy answers instead of passing a request on.
type fault struct {
	code       int
	retryAfter int // seconds; 0 sends no Retry-After
}

type faultProxy struct {
	t         *testing.T
	url       string
	upstream  string
	transport http.RoundTripper

	fault atomic.Pointer[fault]
	// expireNext: the next watch of the node's pods is answered with an
	// ERROR event carrying 410 Expired, as the API server answers a watch
	// from a compacted resourceVersion; expired is closed once it was.
	expireNext atomic.Bool
	expired    chan struct{}

	mu       sync.Mutex
	requests []proxyRequest
	streams  map[*proxiedWatch]struct{} // pod watches in flight
}

// proxiedWatch is one pod watch the proxy streams; end stops it cleanly, as a
// watch ends when the API server's watch timeout runs out.
type proxiedWatch struct{ end chan struct{} }

// newFaultProxy starts a proxy for the node whose kubeconfig is given and
// returns it; kubeconfig(p) is what podline should be given instead.
func newFaultProxy(t *testing.T, cp *controlPlane, nodeKubeconfig string) *faultProxy {
	t.Helper()
	rc, err := clientcmd.BuildConfigFromFlags("", nodeKubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	rt, err := rest.TransportFor(rc)
	if err != nil {
		t.Fatal(err)
	}
	pki := filepath.Join(filepath.Dir(cp.kubeconfig), "pki")
	cert, err := tls.LoadX509KeyPair(filepath.Join(pki, "apiserver.crt"), filepath.Join(pki, "apiserver.key"))
	if err != nil {
		t.Fatalf("the API server's serving certificate, for the proxy: %v", err)
	}
	p := &faultProxy{
		t: t, upstream: strings.TrimSuffix(rc.Host, "/"), transport: rt,
		expired: make(chan struct{}),
		streams: map[*proxiedWatch]struct{}{},
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(p.serve))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	srv.EnableHTTP2 = true
	srv.StartTLS()
	t.Cleanup(srv.Close)
	p.url = srv.URL
	return p
}

// kubeconfig writes a copy of the node's kubeconfig that points at the
// proxy and returns its path.
func (p *faultProxy) kubeconfig(nodeKubeconfig string) string {
	p.t.Helper()
	cfg, err := clientcmd.LoadFromFile(nodeKubeconfig)
	if err != nil {
		p.t.Fatal(err)
	}
	for _, c := range cfg.Clusters {
		c.Server = p.url
	}
	path := filepath.Join(p.t.TempDir(), "via-proxy.kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		p.t.Fatal(err)
	}
	return path
}

// setFault makes the proxy answer every request with f; nil passes them
// on again. Watches already streaming go on.
func (p *faultProxy) setFault(f *fault) { p.fault.Store(f) }

// expireWatch ends the pod watches in flight and answers the next one,
// which the reflector starts from the resourceVersion it had reached, with
// 410 Expired.
func (p *faultProxy) expireWatch() {
	p.expireNext.Store(true)
	p.mu.Lock()
	for w := range p.streams {
		close(w.end)
		delete(p.streams, w)
	}
	p.mu.Unlock()
}

func (p *faultProxy) record(r *http.Request) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.requests = append(p.requests, proxyRequest{
		at: time.Now(), method: r.Method, path: r.URL.Path, query: r.URL.RawQuery, watch: r.URL.Query().Get("watch") == "true",
	})
	return len(p.requests) - 1
}

func (p *faultProxy) answered(i, code int) {
	p.mu.Lock()
	p.requests[i].code = code
	p.mu.Unlock()
}

// between returns the requests that arrived in [from, to).
func (p *faultProxy) between(from, to time.Time) []proxyRequest {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []proxyRequest
	for _, r := range p.requests {
		if !r.at.Before(from) && r.at.Before(to) {
			out = append(out, r)
		}
	}
	return out
}

// isPodWatch: the node's watch of the pods bound to it (the API source's
// reflector), a watch-list that starts with the current pods included.
func isPodWatch(r *http.Request) bool {
	q := r.URL.Query()
	return r.URL.Path == "/api/v1/pods" && q.Get("watch") == "true" &&
		strings.HasPrefix(q.Get("fieldSelector"), "spec.nodeName=")
}

// isResumedPodWatch: a pod watch from a resourceVersion the reflector
// reached, the one the API server answers with 410 once that version is
// compacted away.
func isResumedPodWatch(r *http.Request) bool {
	return isPodWatch(r) && r.URL.Query().Get("sendInitialEvents") != "true"
}

func (p *faultProxy) serve(w http.ResponseWriter, r *http.Request) {
	i := p.record(r)
	if f := p.fault.Load(); f != nil {
		p.answered(i, f.code)
		writeStatus(w, f)
		return
	}
	if isResumedPodWatch(r) && p.expireNext.CompareAndSwap(true, false) {
		p.answered(i, http.StatusGone)
		// A watch that fails this way is a 200 whose stream holds one
		// ERROR event, as the watch cache sends it.
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		io.WriteString(w, `{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","metadata":{},`+
			`"status":"Failure","message":"too old resource version: injected by the e2e fault proxy",`+
			`"reason":"Expired","code":410}}`+"\n")
		close(p.expired)
		return
	}
	code := p.pass(w, r)
	p.answered(i, code)
}

// writeStatus answers with a Status object, as the API server does.
func writeStatus(w http.ResponseWriter, f *fault) {
	reason, details := "InternalError", ""
	if f.code == http.StatusTooManyRequests {
		reason = "TooManyRequests"
	}
	if f.retryAfter > 0 {
		w.Header().Set("Retry-After", fmt.Sprint(f.retryAfter))
		details = fmt.Sprintf(`,"details":{"retryAfterSeconds":%d}`, f.retryAfter)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(f.code)
	fmt.Fprintf(w, `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",`+
		`"message":"injected by the e2e fault proxy","reason":%q%s,"code":%d}`, reason, details, f.code)
}

// pass forwards r to the API server and streams the answer back, flushing
// as it goes (watches); it returns the status code.
func (p *faultProxy) pass(w http.ResponseWriter, r *http.Request) int {
	var body io.Reader
	if r.Body != nil {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			return 0
		}
		body = bytes.NewReader(b)
	}
	out, err := http.NewRequestWithContext(r.Context(), r.Method, p.upstream+r.URL.RequestURI(), body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return http.StatusBadGateway
	}
	for k, vs := range r.Header {
		out.Header[k] = vs
	}
	resp, err := p.transport.RoundTrip(out)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return http.StatusBadGateway
	}
	defer resp.Body.Close()
	for k, vs := range resp.Header {
		w.Header()[k] = vs
	}
	w.WriteHeader(resp.StatusCode)
	var end chan struct{}
	if isPodWatch(r) && resp.StatusCode == http.StatusOK {
		pw := &proxiedWatch{end: make(chan struct{})}
		p.mu.Lock()
		p.streams[pw] = struct{}{}
		p.mu.Unlock()
		defer func() {
			p.mu.Lock()
			delete(p.streams, pw)
			p.mu.Unlock()
		}()
		end = pw.end
	}
	copyFlushing(w, resp.Body, end)
	return resp.StatusCode
}

// copyFlushing copies src to w, flushing after every read, until src ends
// or end is closed (nil: never). The caller closes src, which ends the
// reader goroutine's last Read.
func copyFlushing(w http.ResponseWriter, src io.Reader, end <-chan struct{}) {
	flusher, _ := w.(http.Flusher)
	chunks := make(chan []byte)
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		defer close(chunks)
		for {
			buf := make([]byte, 32<<10)
			n, err := src.Read(buf)
			if n > 0 {
				select {
				case chunks <- buf[:n]:
				case <-stop:
					return
				}
			}
			if err != nil {
				return
			}
		}
	}()
	for {
		select {
		case b, ok := <-chunks:
			if !ok {
				return
			}
			if _, err := w.Write(b); err != nil {
				return
			}
			if flusher != nil {
				flusher.Flush()
			}
		case <-end:
			return
		}
	}
}

// String is for a test's log: where the proxy listens and what it fronts.
func (p *faultProxy) String() string { return p.url + " → " + p.upstream }
