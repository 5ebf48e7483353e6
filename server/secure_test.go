package server

import (
	"bufio"
	"context"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	certutil "k8s.io/client-go/util/cert"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// fakeLocator knows one pod, default/web, with container app (running,
// its log at log) and a sandbox.
type fakeLocator struct {
	log     string
	running bool
}

func (l *fakeLocator) Container(ns, pod, uid, c string) (string, error) {
	if ns != "default" || pod != "web" || (uid != "" && uid != "u1") {
		return "", fmt.Errorf("%w: pod %q does not exist", ErrNotFound, ns+"/"+pod)
	}
	if c != "app" {
		return "", fmt.Errorf("%w: container %s is not valid for pod %s", ErrNotFound, c, pod)
	}
	return "cid-app", nil
}

func (l *fakeLocator) Sandbox(ns, pod, uid string) (string, error) {
	if _, err := l.Container(ns, pod, uid, "app"); err != nil {
		return "", err
	}
	return "sb-web", nil
}

func (l *fakeLocator) LogFile(ns, pod, c string, previous bool) (string, func() bool, error) {
	if _, err := l.Container(ns, pod, "", c); err != nil {
		return "", nil, err
	}
	if previous {
		return "", nil, fmt.Errorf("%w: previous terminated container %q in pod %q not found", ErrBadRequest, c, pod)
	}
	return l.log, func() bool { return l.running }, nil
}

func (l *fakeLocator) RunningPods() []v1.Pod { return nil }

// fakeStreamer answers every session with the URL of stream, and records
// what it was asked.
type fakeStreamer struct {
	url  string
	exec *runtimeapi.ExecRequest
	pf   *runtimeapi.PortForwardRequest
}

func (s *fakeStreamer) Exec(_ context.Context, r *runtimeapi.ExecRequest) (string, error) {
	s.exec = r
	return s.url, nil
}

func (s *fakeStreamer) Attach(context.Context, *runtimeapi.AttachRequest) (string, error) {
	return s.url, nil
}

func (s *fakeStreamer) PortForward(_ context.Context, r *runtimeapi.PortForwardRequest) (string, error) {
	s.pf = r
	return s.url, nil
}

func (s *fakeStreamer) ExecSync(_ context.Context, id string, cmd []string, _ time.Duration) (*runtimeapi.ExecSyncResponse, error) {
	return &runtimeapi.ExecSyncResponse{Stdout: []byte(id + ": " + strings.Join(cmd, " ") + "\n")}, nil
}

// echoStreamServer stands for the runtime's streaming server: it switches
// protocols on any upgrade request and echoes what it then reads.
func echoStreamServer(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				br := bufio.NewReader(c)
				req, err := http.ReadRequest(br)
				if err != nil || req.Header.Get("Upgrade") == "" {
					io.WriteString(c, "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")
					return
				}
				io.WriteString(c, "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: "+req.Header.Get("Upgrade")+"\r\n\r\n")
				io.Copy(c, br)
			}()
		}
	}()
	return "http://" + l.Addr().String() + "/exec/token123"
}

func newSecure(t *testing.T) (*Secure, *fakeLocator, *fakeStreamer) {
	t.Helper()
	logs := t.TempDir()
	loc := &fakeLocator{log: filepath.Join(logs, "0.log"), running: true}
	st := &fakeStreamer{url: echoStreamServer(t)}
	return &Secure{Locator: loc, Streamer: st, PodLogsDir: logs, Debugging: true}, loc, st
}

func TestContainerLogs(t *testing.T) {
	s, loc, _ := newSecure(t)
	lines := "2026-11-25T10:00:00.000000001Z stdout F first\n" +
		"2026-11-25T10:00:01.000000001Z stderr P sec\n" +
		"2026-11-25T10:00:01.000000002Z stderr F ond\n" +
		"2026-11-25T10:00:02.000000001Z stdout F third\n"
	if err := os.WriteFile(loc.log, []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	h := s.Handler()
	f := func(path string, wantCode int, want string) {
		t.Helper()
		code, body := get(t, h, path)
		if code != wantCode || !strings.Contains(body, want) {
			t.Errorf("GET %s = %d %q, want %d with %q", path, code, body, wantCode, want)
		}
	}
	f("/containerLogs/default/web/app", 200, "first\nsecond\nthird\n")
	f("/containerLogs/default/web/app?tailLines=1", 200, "third\n")
	f("/containerLogs/default/web/app?timestamps=true&tailLines=1", 200, "2026-11-25T10:00:02.000000001Z third\n")
	f("/containerLogs/default/web/app?tailLines=-1", 400, "tailLines")
	f("/containerLogs/default/web/app?previous=true", 400, "previous terminated container")
	f("/containerLogs/default/nope/app", 404, "does not exist")
	f("/containerLogs/default/web/other", 404, "not valid for pod")
}

// An exec is relayed to the runtime's streaming server with the streams
// the request asked for; what the client writes after the upgrade comes
// back through the relay.
func TestExecRelaysTheUpgradedConnection(t *testing.T) {
	s, _, st := newSecure(t)
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()

	c, err := net.Dial("tcp", strings.TrimPrefix(srv.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "POST /exec/default/web/app?command=sh&command=-c&command=id&input=1&output=1&tty=1&error=1 HTTP/1.1\r\n"+
		"Host: node\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\nX-Stream-Protocol-Version: v4.channel.k8s.io\r\n\r\n")
	br := bufio.NewReader(c)
	res, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != http.StatusSwitchingProtocols {
		b, _ := io.ReadAll(res.Body)
		t.Fatalf("status %d: %s", res.StatusCode, b)
	}
	io.WriteString(c, "ping\n")
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	line, err := br.ReadString('\n')
	if err != nil || line != "ping\n" {
		t.Fatalf("through the relay: %q, %v", line, err)
	}
	e := st.exec
	if e.ContainerId != "cid-app" || strings.Join(e.Cmd, " ") != "sh -c id" || !e.Stdin || !e.Stdout || !e.Tty || e.Stderr {
		t.Fatalf("exec request %+v: want the command, stdin, stdout, a tty and no separate stderr", e)
	}
}

func TestStreamRequestErrors(t *testing.T) {
	s, _, st := newSecure(t)
	h := s.Handler()
	post := func(path string) (int, string) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, path, nil))
		return rec.Code, rec.Body.String()
	}
	f := func(path string, wantCode int, want string) {
		t.Helper()
		code, body := post(path)
		if code != wantCode || !strings.Contains(body, want) {
			t.Errorf("POST %s = %d %q, want %d with %q", path, code, body, wantCode, want)
		}
	}
	f("/exec/default/web/app?output=1", 400, "no command")
	f("/exec/default/web/app?command=ls", 400, "at least 1 of stdin, stdout, stderr")
	f("/portForward/default/web?port=0", 400, "port")
	f("/portForward/default/web?port=http", 400, "port")
	// Not an upgrade: refused before the runtime is asked.
	f("/portForward/default/web?port=8080", 400, "Upgrade request required")
	f("/exec/default/web/app?command=ls&output=1", 400, "Upgrade request required")
	if st.pf != nil || st.exec != nil {
		t.Errorf("the runtime was asked for a stream nobody can use: %+v %+v", st.pf, st.exec)
	}
	up := func(path string) (int, string) {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodPost, path, nil)
		req.Header.Set("Connection", "Upgrade")
		req.Header.Set("Upgrade", "SPDY/3.1")
		h.ServeHTTP(rec, req)
		return rec.Code, rec.Body.String()
	}
	for _, p := range []string{"/exec/default/nope/app?command=ls&output=1", "/exec/default/web/u2/app?command=ls&output=1"} {
		if code, body := up(p); code != 404 || !strings.Contains(body, "does not exist") {
			t.Errorf("POST %s = %d %q, want 404", p, code, body)
		}
	}
	if code, body := up("/attach/default/web/other?output=1"); code != 404 || !strings.Contains(body, "not valid") {
		t.Errorf("attach to an unknown container = %d %q", code, body)
	}
	f("/run/default/web/app?cmd=echo+hi", 200, "cid-app: echo hi")
}

func TestTLSSettings(t *testing.T) {
	if ids, _, err := CipherSuites(nil); err != nil || len(ids) != len(defaultCiphers) {
		t.Fatalf("default suites %v %v", ids, err)
	}
	ids, weak, err := CipherSuites([]string{"TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305", "TLS_RSA_WITH_AES_128_GCM_SHA256"})
	if err != nil || len(ids) != 2 || len(weak) != 1 || weak[0] != "TLS_RSA_WITH_AES_128_GCM_SHA256" {
		t.Fatalf("the kubelet's alias and a weak suite: %v %v %v", ids, weak, err)
	}
	if _, _, err := CipherSuites([]string{"TLS_NOPE"}); err == nil {
		t.Fatal("an unknown suite was taken")
	}
	if _, err := TLSVersion("VersionTLS11"); err == nil {
		t.Fatal("TLS 1.1 was taken")
	}

	dir := t.TempDir()
	o := TLSOptions{CertDir: dir, Hostname: "node-a", IPs: []net.IP{net.ParseIP("10.0.0.5")}}
	cert, key, err := o.ServingPair()
	if err != nil {
		t.Fatal(err)
	}
	first, _ := os.ReadFile(cert)
	if _, _, err := o.ServingPair(); err != nil {
		t.Fatal(err)
	}
	again, _ := os.ReadFile(cert)
	if string(first) != string(again) || filepath.Dir(key) != dir {
		t.Fatal("the self-signed pair was not reused")
	}
	cfg, files, err := o.Config(nil)
	if err != nil {
		t.Fatal(err)
	}
	leaf, _ := cfg.GetCertificate(nil)
	if cfg.MinVersion != 0x0303 || leaf == nil || len(leaf.Certificate) == 0 || files == nil {
		t.Fatalf("config %+v", cfg)
	}
}

// A serving pair replaced on disk is served after a reload; a broken one
// leaves the last good pair in service.
func TestServingPairReload(t *testing.T) {
	dir := t.TempDir()
	cert, key := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	writePair := func(host string) {
		t.Helper()
		c, k, err := certutil.GenerateSelfSignedCertKey(host, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		// Replaced as rotation tools do: written aside, renamed over.
		for _, f := range []struct {
			path string
			data []byte
		}{{cert, c}, {key, k}} {
			if err := os.WriteFile(f.path+".new", f.data, 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(f.path+".new", f.path); err != nil {
				t.Fatal(err)
			}
		}
	}
	served := func(f *CertFiles) string {
		t.Helper()
		c, _ := f.GetCertificate(nil)
		leaf, err := x509.ParseCertificate(c.Certificate[0])
		if err != nil {
			t.Fatal(err)
		}
		return leaf.Subject.CommonName
	}
	writePair("first")
	f, err := LoadCertFiles(cert, key)
	if err != nil {
		t.Fatal(err)
	}
	if changed, err := f.Reload(); changed || err != nil {
		t.Fatalf("reload with no change: %v, %v", changed, err)
	}
	writePair("second")
	if changed, err := f.Reload(); !changed || err != nil || !strings.HasPrefix(served(f), "second") {
		t.Fatalf("reload after a rotation: %v, %v, serving %q", changed, err, served(f))
	}
	os.WriteFile(key, []byte("not a key"), 0o600)
	if changed, err := f.Reload(); changed || err == nil || !strings.HasPrefix(served(f), "second") {
		t.Fatalf("reload of a broken pair: %v, %v, serving %q", changed, err, served(f))
	}
	if _, err := LoadCertFiles(cert, key); err == nil || !strings.Contains(err.Error(), cert) {
		t.Fatalf("loading a broken pair: %v, want an error naming %s", err, cert)
	}
}

// Without the debugging handlers what reaches into containers and the
// node's files answers 405, as the kubelet's; the rest is served.
func TestDebuggingHandlersOff(t *testing.T) {
	s, loc, _ := newSecure(t)
	s.Debugging = false
	os.WriteFile(loc.log, []byte("2026-11-25T10:00:00Z stdout F x\n"), 0o644)
	h := s.Handler()
	for _, p := range []string{"/containerLogs/default/web/app", "/runningpods/", "/debug/pprof/"} {
		if code, body := get(t, h, p); code != http.StatusMethodNotAllowed || body != "Debug endpoints are disabled.\n" {
			t.Errorf("GET %s = %d %q, want 405", p, code, body)
		}
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/exec/default/web/app?command=id&output=1", nil))
	if rec.Code != http.StatusMethodNotAllowed {
		t.Errorf("exec = %d, want 405", rec.Code)
	}
	s.ReadOnly.Pods = func() []v1.Pod { return nil }
	if code, _ := get(t, s.Handler(), "/pods"); code != 200 {
		t.Errorf("/pods = %d, want 200", code)
	}
}
