package prober

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// The probe's own socket and Go's dialer give every run the same outcome,
// word for word: statuses, redirects, bodies, refusals, timeouts, and
// servers that misbehave.
func TestOwnSocketMatchesGoDialer(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/ok", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok")) })
	mux.HandleFunc("/500", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "secret", 500) })
	mux.HandleFunc("/moved", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/ok", http.StatusFound) })
	mux.HandleFunc("/loop", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/loop", http.StatusFound) })
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusTemporaryRedirect)
		w.Write([]byte(strings.Repeat("x", 1<<20)))
	})
	mux.HandleFunc("/chunked", func(w http.ResponseWriter, r *http.Request) {
		for i := range 3 {
			fmt.Fprintf(w, "part %d\n", i)
			w.(http.Flusher).Flush()
		}
	})
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
	mux.HandleFunc("/headers", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Probe") != "yes" || r.Host != "example.test" || r.UserAgent() != userAgent {
			w.WriteHeader(http.StatusBadRequest)
		}
	})
	s := httptest.NewServer(mux)
	defer s.Close()
	ip, port := serverAddr(t, s)

	// A server that closes without answering, and one that answers
	// garbage.
	hangup := rawServer(t, func(c net.Conn) {})
	garbage := rawServer(t, func(c net.Conn) { c.Write([]byte("NOT HTTP\r\n\r\n")) })
	// A port nothing listens on.
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	closed := l.Addr().(*net.TCPAddr).Port
	l.Close()

	cases := []struct {
		name    string
		action  v1.HTTPGetAction
		ip      string
		timeout time.Duration
	}{
		{"ok", v1.HTTPGetAction{Path: "/ok", Port: intstr.FromInt(port)}, ip, time.Second},
		{"500", v1.HTTPGetAction{Path: "/500", Port: intstr.FromInt(port)}, ip, time.Second},
		{"redirect", v1.HTTPGetAction{Path: "/moved", Port: intstr.FromInt(port)}, ip, time.Second},
		{"redirect loop", v1.HTTPGetAction{Path: "/loop", Port: intstr.FromInt(port)}, ip, time.Second},
		{"large body", v1.HTTPGetAction{Path: "/big", Port: intstr.FromInt(port)}, ip, time.Second},
		{"chunked", v1.HTTPGetAction{Path: "/chunked", Port: intstr.FromInt(port)}, ip, time.Second},
		{"timeout", v1.HTTPGetAction{Path: "/slow", Port: intstr.FromInt(port)}, ip, 50 * time.Millisecond},
		{"headers", v1.HTTPGetAction{Path: "/headers", Port: intstr.FromInt(port),
			HTTPHeaders: []v1.HTTPHeader{{Name: "X-Probe", Value: "yes"}, {Name: "Host", Value: "example.test"}}}, ip, time.Second},
		{"refused", v1.HTTPGetAction{Path: "/", Port: intstr.FromInt(closed)}, "127.0.0.1", time.Second},
		{"hang-up", v1.HTTPGetAction{Path: "/", Port: intstr.FromInt(hangup)}, "127.0.0.1", time.Second},
		{"garbage", v1.HTTPGetAction{Path: "/", Port: intstr.FromInt(garbage)}, "127.0.0.1", time.Second},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHTTPHandler(&tc.action, &v1.Container{Name: "app"})
			run := func(own bool) outcome {
				ownSockets = own
				defer func() { ownSockets = true }()
				return h.run(context.Background(), target{ip: tc.ip}, tc.timeout)
			}
			own, goDial := run(true), run(false)
			if own.verdict != goDial.verdict || own.output != goDial.output {
				t.Errorf("own socket: %v %q\nGo's dialer: %v %q", own.verdict, own.output, goDial.verdict, goDial.output)
			}
			t.Logf("%v %.200q", own.verdict, own.output)
		})
	}
}

// The refusal names the address as the kubelet's events do.
func TestOwnSocketRefusalWording(t *testing.T) {
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	h := newHTTPHandler(&v1.HTTPGetAction{Path: "/healthz", Port: intstr.FromInt(port)}, &v1.Container{})
	out := h.run(context.Background(), target{ip: "127.0.0.1"}, time.Second)
	want := fmt.Sprintf(`Get "http://127.0.0.1:%d/healthz": dial tcp 127.0.0.1:%d: connect: connection refused`, port, port)
	if out.verdict != failed || out.output != want {
		t.Fatalf("%v %q, want %q", out.verdict, out.output, want)
	}
}

// A run whose context ends mid-wait returns within a poll slice, not at
// its timeout.
func TestOwnSocketSeesCancel(t *testing.T) {
	hang := rawServer(t, func(c net.Conn) { time.Sleep(5 * time.Second) })
	h := newHTTPHandler(&v1.HTTPGetAction{Path: "/", Port: intstr.FromInt(hang)}, &v1.Container{})
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	start := time.Now()
	out := h.run(ctx, target{ip: "127.0.0.1"}, 10*time.Second)
	if took := time.Since(start); out.verdict != failed || took > time.Second {
		t.Fatalf("%v %q after %v", out.verdict, out.output, took)
	}
}

// rawServer accepts connections on loopback and hands each to serve after
// reading the request, closing it when serve returns.
func rawServer(tb testing.TB, serve func(net.Conn)) int {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				buf := make([]byte, 4096)
				_, _ = c.Read(buf)
				serve(c)
			}()
		}
	}()
	return l.Addr().(*net.TCPAddr).Port
}

// A tcpSocket probe says the same through the probe's own socket as
// through Go's dialer.
func TestOwnSocketTCPMatchesGoDialer(t *testing.T) {
	open := rawServer(t, func(c net.Conn) {})
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	closed := l.Addr().(*net.TCPAddr).Port
	l.Close()
	for _, port := range []int{open, closed} {
		h := newTCPHandler(&v1.TCPSocketAction{Port: intstr.FromInt(port)}, &v1.Container{})
		run := func(own bool) outcome {
			ownSockets = own
			defer func() { ownSockets = true }()
			return h.run(context.Background(), target{ip: "127.0.0.1"}, time.Second)
		}
		own, goDial := run(true), run(false)
		if own.verdict != goDial.verdict || own.output != goDial.output {
			t.Errorf("port %d: own socket: %v %q, Go's dialer: %v %q", port, own.verdict, own.output, goDial.verdict, goDial.output)
		}
	}
}

// An IPv6 pod address goes through the probe's socket too.
func TestOwnSocketIPv6(t *testing.T) {
	l, err := net.Listen("tcp", "[::1]:0")
	if err != nil {
		t.Skipf("no IPv6 loopback on this machine: %v", err)
	}
	s := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok")) })}
	go s.Serve(l)
	defer s.Close()
	port := l.Addr().(*net.TCPAddr).Port
	h := newHTTPHandler(&v1.HTTPGetAction{Path: "/", Port: intstr.FromInt(port)}, &v1.Container{})
	if out := h.run(context.Background(), target{ip: "::1"}, time.Second); out.verdict != succeeded {
		t.Fatalf("http over IPv6: %v %q", out.verdict, out.output)
	}
	tcp := newTCPHandler(&v1.TCPSocketAction{Port: intstr.FromInt(port)}, &v1.Container{})
	if out := tcp.run(context.Background(), target{ip: "::1"}, time.Second); out.verdict != succeeded {
		t.Fatalf("tcp over IPv6: %v %q", out.verdict, out.output)
	}
}
