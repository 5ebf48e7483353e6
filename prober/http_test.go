package prober

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// serverAddr splits an httptest server's URL into host and port.
func serverAddr(t *testing.T, s *httptest.Server) (string, int) {
	t.Helper()
	u, _ := url.Parse(s.URL)
	host, port, _ := net.SplitHostPort(u.Host)
	n, _ := strconv.Atoi(port)
	return host, n
}

// probeHTTP runs an httpGet probe of path against s, the pod IP being
// the server's.
func probeHTTP(t *testing.T, s *httptest.Server, g v1.HTTPGetAction, timeout time.Duration) outcome {
	t.Helper()
	ip, port := serverAddr(t, s)
	if g.Port.Type == intstr.Int && g.Port.IntVal == 0 {
		g.Port = intstr.FromInt(port)
	}
	h := newHTTPHandler(&g, &v1.Container{Name: "app"})
	return h.run(context.Background(), target{ip: ip}, timeout)
}

func TestHTTPStatusCodes(t *testing.T) {
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		code, _ := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/"))
		w.WriteHeader(code)
		fmt.Fprint(w, "body of ", code)
	}))
	defer s.Close()
	for code, want := range map[int]verdict{200: succeeded, 204: succeeded, 299: succeeded, 399: warned, 400: failed, 404: failed, 503: failed} {
		out := probeHTTP(t, s, v1.HTTPGetAction{Path: "/" + strconv.Itoa(code)}, time.Second)
		if out.verdict != want {
			t.Errorf("%d: verdict %v, want %v", code, out.verdict, want)
		}
		if want == failed && out.output != fmt.Sprintf("HTTP probe failed with statuscode: %d", code) {
			t.Errorf("%d: output %q", code, out.output)
		}
	}
}

func TestHTTPRequest(t *testing.T) {
	// The handler hands each request over: the probe's answer, having
	// come through a socket, orders nothing for the race detector.
	reqs := make(chan *http.Request, 1)
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { reqs <- r }))
	defer s.Close()

	out := probeHTTP(t, s, v1.HTTPGetAction{Path: "/healthz?full=1"}, time.Second)
	if out.verdict != succeeded {
		t.Fatalf("%+v", out)
	}
	got := <-reqs
	if got.URL.Path != "/healthz" || got.URL.RawQuery != "full=1" {
		t.Errorf("request URI %q", got.RequestURI)
	}
	if ua := got.Header.Get("User-Agent"); ua != "kube-probe/1.36" {
		t.Errorf("User-Agent %q", ua)
	}
	if a := got.Header.Get("Accept"); a != "*/*" {
		t.Errorf("Accept %q", a)
	}
	if got.Header.Get("Connection") != "close" && !got.Close {
		t.Error("the request keeps its connection alive")
	}

	out = probeHTTP(t, s, v1.HTTPGetAction{Path: "/", HTTPHeaders: []v1.HTTPHeader{
		{Name: "Host", Value: "app.example"},
		{Name: "user-agent", Value: "mine/1"},
		{Name: "Accept", Value: ""},
		{Name: "X-Token", Value: "a"},
		{Name: "X-Token", Value: "b"},
	}}, time.Second)
	if out.verdict != succeeded {
		t.Fatalf("%+v", out)
	}
	got = <-reqs
	if got.Host != "app.example" {
		t.Errorf("Host %q, want the header's", got.Host)
	}
	if ua := got.Header.Get("User-Agent"); ua != "mine/1" {
		t.Errorf("User-Agent %q, want the user's", ua)
	}
	if _, ok := got.Header["Accept"]; ok {
		t.Errorf("an empty Accept was sent: %q", got.Header["Accept"])
	}
	if v := got.Header.Values("X-Token"); len(v) != 2 {
		t.Errorf("X-Token %q, want both values", v)
	}
}

func TestHTTPSSkipsVerification(t *testing.T) {
	s := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer s.Close()
	out := probeHTTP(t, s, v1.HTTPGetAction{Path: "/", Scheme: v1.URISchemeHTTPS}, time.Second)
	if out.verdict != succeeded {
		t.Fatalf("self-signed HTTPS: %+v", out)
	}
}

func TestHTTPRedirects(t *testing.T) {
	var hits sync.Map
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := hits.LoadOrStore(r.URL.Path, new(atomic.Int32))
		n.(*atomic.Int32).Add(1)
		_, port, _ := net.SplitHostPort(r.Host)
		switch r.URL.Path {
		case "/same":
			http.Redirect(w, r, "/ok", http.StatusFound)
		case "/elsewhere":
			// Another host name for the same server: must not be followed.
			w.Header().Set("Location", fmt.Sprintf("http://localhost:%s/ok", port))
			w.WriteHeader(http.StatusMovedPermanently)
			fmt.Fprint(w, "moved")
		case "/loop":
			http.Redirect(w, r, "/loop", http.StatusFound)
		}
	}))
	defer s.Close()
	count := func(path string) int32 {
		n, ok := hits.Load(path)
		if !ok {
			return 0
		}
		return n.(*atomic.Int32).Load()
	}

	if out := probeHTTP(t, s, v1.HTTPGetAction{Path: "/same"}, time.Second); out.verdict != succeeded || count("/ok") != 1 {
		t.Fatalf("same-host redirect: %+v, /ok hit %d times", out, count("/ok"))
	}
	out := probeHTTP(t, s, v1.HTTPGetAction{Path: "/elsewhere"}, time.Second)
	if out.verdict != warned || out.output != "Probe terminated redirects, Response body: moved" {
		t.Fatalf("redirect to another host: %+v", out)
	}
	if count("/ok") != 1 {
		t.Fatal("the redirect to another host was followed")
	}
	out = probeHTTP(t, s, v1.HTTPGetAction{Path: "/loop"}, time.Second)
	if out.verdict != failed || !strings.Contains(out.output, "stopped after 10 redirects") {
		t.Fatalf("redirect loop: %+v", out)
	}
	// Ten requests: the first and nine redirects followed; the tenth
	// redirect is refused (Go's and the kubelet's count).
	if n := count("/loop"); n != maxRedirects {
		t.Fatalf("redirect loop: %d requests, want %d", n, maxRedirects)
	}
}

func TestHTTPTimeout(t *testing.T) {
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
	}))
	defer s.Close()
	start := time.Now()
	out := probeHTTP(t, s, v1.HTTPGetAction{Path: "/"}, 50*time.Millisecond)
	if out.verdict != failed || !strings.Contains(out.output, "Client.Timeout exceeded") {
		t.Fatalf("%+v", out)
	}
	if took := time.Since(start); took > time.Second {
		t.Fatalf("a 50ms timeout took %v", took)
	}
}

func TestHTTPHostAndNamedPort(t *testing.T) {
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer s.Close()
	ip, port := serverAddr(t, s)
	c := &v1.Container{Name: "app", Ports: []v1.ContainerPort{{Name: "http", ContainerPort: int32(port)}}}

	// httpGet.host wins over the pod IP (127.0.0.2 has no server).
	h := newHTTPHandler(&v1.HTTPGetAction{Path: "/", Host: ip, Port: intstr.FromString("http")}, c)
	if out := h.run(context.Background(), target{ip: "127.0.0.2"}, time.Second); out.verdict != succeeded {
		t.Fatalf("named port and host: %+v", out)
	}
	h = newHTTPHandler(&v1.HTTPGetAction{Path: "/", Port: intstr.FromInt(port)}, c)
	if out := h.run(context.Background(), target{ip: "127.0.0.2"}, time.Second); out.verdict != failed ||
		!strings.Contains(out.output, "connection refused") {
		t.Fatalf("pod IP without a server: %+v", out)
	}
	h = newHTTPHandler(&v1.HTTPGetAction{Path: "/", Port: intstr.FromString("metrics")}, c)
	out := h.run(context.Background(), target{ip: ip}, time.Second)
	if out.verdict != errored || !errors.Is(out.err, errPort) || out.err.Error() != `port "metrics" not found` {
		t.Fatalf("unknown port name: %+v", out)
	}
}

func TestHTTPBodyIsCapped(t *testing.T) {
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusTemporaryRedirect) // no Location: not followed
		w.Write([]byte(strings.Repeat("x", 1<<20)))
	}))
	defer s.Close()
	out := probeHTTP(t, s, v1.HTTPGetAction{Path: "/"}, time.Second)
	body := strings.TrimPrefix(out.output, "Probe terminated redirects, Response body: ")
	if out.verdict != warned || len(body) != maxOutput {
		t.Fatalf("verdict %v, body of %d bytes in the message, want %d", out.verdict, len(body), maxOutput)
	}
}

// openFDs counts this process's open file descriptors.
func openFDs(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd")
	}
	return len(ents)
}

// Thousands of probes leave no connection behind: every run closes its own,
// whether the body was read whole or cut at 10 KiB.
func TestHTTPDoesNotLeakConnections(t *testing.T) {
	big := strings.Repeat("y", 64<<10)
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/big" {
			w.Write([]byte(big))
			return
		}
		w.Write([]byte("ok"))
	}))
	defer s.Close()
	ip, port := serverAddr(t, s)
	small := newHTTPHandler(&v1.HTTPGetAction{Path: "/", Port: intstr.FromInt(port)}, &v1.Container{})
	large := newHTTPHandler(&v1.HTTPGetAction{Path: "/big", Port: intstr.FromInt(port)}, &v1.Container{})

	// One run first, so that lazily opened descriptors (the poller) exist.
	small.run(context.Background(), target{ip: ip}, time.Second)
	before := openFDs(t)

	const runs, parallel = 2000, 16
	var wg sync.WaitGroup
	var fails atomic.Int32
	for w := range parallel {
		wg.Go(func() {
			for i := w; i < runs; i += parallel {
				h := small
				if i%2 == 1 {
					h = large
				}
				if out := h.run(context.Background(), target{ip: ip}, 5*time.Second); out.verdict != succeeded {
					fails.Add(1)
				}
			}
		})
	}
	wg.Wait()
	if n := fails.Load(); n > 0 {
		t.Fatalf("%d of %d runs failed", n, runs)
	}
	// The server closes its side when it reads our close: give it a moment.
	deadline := time.Now().Add(3 * time.Second)
	after := openFDs(t)
	for after > before+4 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
		after = openFDs(t)
	}
	if after > before+4 {
		t.Fatalf("open fds grew from %d to %d after %d probes", before, after, runs)
	}
	t.Logf("open fds: %d before, %d after %d probes", before, after, runs)
}
