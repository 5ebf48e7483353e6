package kubeapi

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// clientCert makes a self-signed client certificate named cn.
func clientCert(t *testing.T, cn string) (*tls.Certificate, []byte, []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: cn},
		NotBefore:    time.Now().Add(-time.Minute),
		NotAfter:     time.Now().Add(time.Hour),
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder})
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	return &pair, certPEM, keyPEM
}

// An API server stand-in that answers every request with the common name
// of the client certificate presented on its connection.
func whoAmIServer(t *testing.T) (*httptest.Server, *atomic.Int32) {
	var conns atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		cn := ""
		if len(r.TLS.PeerCertificates) > 0 {
			cn = r.TLS.PeerCertificates[0].Subject.CommonName
		}
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, cn)
	}))
	srv.TLS = &tls.Config{ClientAuth: tls.RequestClientCert}
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv, &conns
}

func writeKubeconfig(t *testing.T, srv *httptest.Server, certPEM, keyPEM []byte) string {
	t.Helper()
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	enc := base64.StdEncoding.EncodeToString
	user := "  user: {}\n"
	if certPEM != nil {
		user = fmt.Sprintf("  user:\n    client-certificate-data: %s\n    client-key-data: %s\n", enc(certPEM), enc(keyPEM))
	}
	cfg := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: c
  cluster:
    server: %s
    certificate-authority-data: %s
contexts:
- name: c
  context: {cluster: c, user: u}
current-context: c
users:
- name: u
%s`, srv.URL, enc(ca), user)
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// With ClientCert, every client presents the current certificate, and
// after CertRotated the next request comes over a new connection with the
// new one; the kubeconfig's CA still checks the server.
func TestClientCertRotates(t *testing.T) {
	srv, conns := whoAmIServer(t)
	first, certPEM, keyPEM := clientCert(t, "system:node:first")
	second, _, _ := clientCert(t, "system:node:second")
	kubeconfig := writeKubeconfig(t, srv, certPEM, keyPEM)

	gotCert, gotKey, err := ClientCertPEM(kubeconfig)
	if err != nil || string(gotCert) != string(certPEM) || string(gotKey) != string(keyPEM) {
		t.Fatalf("ClientCertPEM = %d, %d bytes, %v; want the kubeconfig's pair", len(gotCert), len(gotKey), err)
	}

	var mu sync.Mutex
	cur := first
	clients, err := NewClients(Config{Kubeconfig: kubeconfig, QPS: 100, Burst: 100, ClientCert: func() *tls.Certificate {
		mu.Lock()
		defer mu.Unlock()
		return cur
	}}, 100, 100)
	if err != nil {
		t.Fatal(err)
	}
	whoami := func() string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		b, err := clients.Heartbeat.CoreV1().RESTClient().Get().AbsPath("/whoami").DoRaw(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	if got := whoami(); got != "system:node:first" {
		t.Fatalf("presented %q, want the first certificate", got)
	}
	mu.Lock()
	cur = second
	mu.Unlock()
	if got := whoami(); got != "system:node:first" {
		t.Fatalf("an open connection presented %q; it keeps the handshake it made", got)
	}
	before := conns.Load()
	clients.CertRotated()
	if got := whoami(); got != "system:node:second" {
		t.Fatalf("after CertRotated presented %q, want the second certificate", got)
	}
	if conns.Load() <= before {
		t.Error("CertRotated made no new connection")
	}
	// The clients share the transport: the pods client presents the new
	// certificate too.
	b, err := clients.Pods.CoreV1().RESTClient().Get().AbsPath("/whoami").DoRaw(context.Background())
	if err != nil || string(b) != "system:node:second" {
		t.Errorf("pods client presented %q, %v", b, err)
	}
}

// A kubeconfig without a client certificate starts rotation from none.
func TestClientCertPEMWithoutCertificate(t *testing.T) {
	srv, _ := whoAmIServer(t)
	cert, key, err := ClientCertPEM(writeKubeconfig(t, srv, nil, nil))
	if err != nil || cert != nil || key != nil {
		t.Fatalf("ClientCertPEM = %q, %q, %v; want nothing", cert, key, err)
	}
}
