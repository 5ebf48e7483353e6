//go:build e2e

package e2e

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// The credentials of the manifest URL, which nothing podline prints or
// serves may show.
var manifestSecrets = []string{"alice", "s3cret", "t0ken", "b34rer"}

func showsSecret(text string) string {
	for _, s := range manifestSecrets {
		if strings.Contains(text, s) {
			return s
		}
	}
	return ""
}

// credentialServer is a manifest URL that wants alice's password, a token
// in the query and an API key header. It fails its first requests two
// ways (a connection closed mid-answer, which net/http's client reports
// with the URL, then a 403) and then serves an empty list of pods.
type credentialServer struct {
	mu       sync.Mutex
	requests int
	good     int // requests that carried every credential
	srv      *http.Server
	url      string // with the credentials
}

func startCredentialServer(t *testing.T) *credentialServer {
	t.Helper()
	port := freePort(t)
	s := &credentialServer{url: fmt.Sprintf("http://alice:s3cret@127.0.0.1:%d/pods?token=t0ken&node=e2e", port)}
	s.srv = &http.Server{Addr: fmt.Sprintf("127.0.0.1:%d", port), Handler: http.HandlerFunc(s.serve)}
	go s.srv.ListenAndServe()
	t.Cleanup(func() { s.srv.Close() })
	return s
}

func (s *credentialServer) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.requests++
	n := s.requests
	user, pass, _ := r.BasicAuth()
	if user == "alice" && pass == "s3cret" && r.URL.Query().Get("token") == "t0ken" && r.Header.Get("X-Api-Key") == "b34rer" {
		s.good++
	}
	s.mu.Unlock()
	switch n {
	case 1:
		if c, _, err := http.NewResponseController(w).Hijack(); err == nil {
			c.Close()
		}
	case 2:
		http.Error(w, "no", http.StatusForbidden)
	default:
		w.Write(nil)
	}
}

func (s *credentialServer) counts() (requests, good int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests, s.good
}

// clientCA makes a client certificate that is its own CA, for
// --client-ca-file, and returns the file and the certificate.
func clientCA(t *testing.T) (string, tls.Certificate) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "e2e-admin"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(file, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		t.Fatal(err)
	}
	return file, tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// startServingAgent runs podline with its authenticated port open to a
// client certificate of the test's; it returns the agent and a GET on
// that port.
func startServingAgent(t *testing.T, flags ...string) (*agent, func(path string) (int, string)) {
	t.Helper()
	caFile, cert := clientCA(t)
	port := freePort(t)
	a := startAgent(t, append([]string{"--port", fmt.Sprint(port), "--client-ca-file", caFile}, flags...)...)
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true, Certificates: []tls.Certificate{cert}}}}
	get := func(path string) (int, string) {
		t.Helper()
		resp, err := client.Get(fmt.Sprintf("https://127.0.0.1:%d%s", port, path))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	return a, get
}

// startSecretAgent runs podline polling the server every second; it
// returns once podline logged both failures and fetched again.
func startSecretAgent(t *testing.T, s *credentialServer, flags ...string) (*agent, func(path string) string) {
	t.Helper()
	a, getCode := startServingAgent(t, append([]string{"--http-check-frequency=1s"}, flags...)...)
	get := func(path string) string {
		t.Helper()
		code, body := getCode(path)
		if code != http.StatusOK {
			t.Fatalf("GET %s = %d %q", path, code, body)
		}
		return body
	}
	eventually(t, 20*time.Second, "three fetches of the manifest URL", func() (bool, string) {
		n, _ := s.counts()
		return n >= 3 && strings.Count(a.out.String(), "bad pod manifest URL") >= 2, fmt.Sprintf("%d requests; log:\n%s", n, a.out)
	})
	return a, get
}

// Credentials given on the command line are sent, and never shown:
// not in podline's log (the failed fetches included), not in /configz,
// not in /debug/pprof/cmdline.
func TestManifestURLCredentialsHidden(t *testing.T) {
	s := startCredentialServer(t)
	a, get := startSecretAgent(t, s, "--manifest-url", s.url, "--manifest-url-header=X-Api-Key:b34rer")
	if _, good := s.counts(); good == 0 {
		t.Errorf("no request carried the credentials")
	}
	configz := get("/configz")
	cmdline := get("/debug/pprof/cmdline")
	for what, text := range map[string]string{"podline's log": a.out.String(), "/configz": configz, "/debug/pprof/cmdline": cmdline} {
		if secret := showsSecret(text); secret != "" {
			t.Errorf("%s shows %q:\n%s", what, secret, text)
		}
	}
	redacted := strings.Replace(strings.Replace(s.url, "alice:s3cret", "<redacted>", 1), "?token=t0ken&node=e2e", "?token=<redacted>&node=<redacted>", 1)
	var shown struct {
		Kubelet struct {
			StaticPodURL string `json:"staticPodURL"`
		} `json:"kubeletconfig"`
	}
	if err := json.Unmarshal([]byte(configz), &shown); err != nil || shown.Kubelet.StaticPodURL != redacted {
		t.Errorf("/configz staticPodURL %q (%v), want %s", shown.Kubelet.StaticPodURL, err, redacted)
	}
	args := strings.Split(cmdline, "\x00")
	if !contains(cmdline, "\x00--manifest-url\x00"+redacted+"\x00") || args[len(args)-1] != "--manifest-url-header=X-Api-Key:<redacted>" {
		t.Errorf("/debug/pprof/cmdline = %q, want the arguments with the credentials redacted", args)
	}
	// The closed connection's error is net/http's, which names the URL.
	if !contains(a.out.String(), `Get \"`+redacted+`\": EOF`) || !contains(a.out.String(), redacted+": status 403 Forbidden") {
		t.Errorf("the log lacks the failed fetches with the URL redacted:\n%s", a.out)
	}
	if !contains(a.out.String(), "--manifest-url carries credentials on the command line") {
		t.Errorf("no warning about the credentials on the command line:\n%s", a.out)
	}
}

// Given in files, the credentials are sent and stay out of
// /proc/<pid>/cmdline, which every local user can read.
func TestManifestURLCredentialsFromFiles(t *testing.T) {
	s := startCredentialServer(t)
	dir := t.TempDir()
	urlFile, headerFile := filepath.Join(dir, "url"), filepath.Join(dir, "headers")
	if err := os.WriteFile(urlFile, []byte(s.url+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(headerFile, []byte("# the manifest server's key\nX-Api-Key: b34rer\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	a, get := startSecretAgent(t, s, "--manifest-url-file", urlFile, "--manifest-url-header-file", headerFile)
	if _, good := s.counts(); good == 0 {
		t.Errorf("no request carried the credentials from the files")
	}
	proc, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", a.cmd.Process.Pid))
	if err != nil {
		t.Fatal(err)
	}
	if !contains(string(proc), urlFile) {
		t.Fatalf("/proc/<pid>/cmdline %q is not podline's", proc)
	}
	for what, text := range map[string]string{"/proc/<pid>/cmdline": string(proc), "podline's log": a.out.String(),
		"/configz": get("/configz"), "/debug/pprof/cmdline": get("/debug/pprof/cmdline")} {
		if secret := showsSecret(text); secret != "" {
			t.Errorf("%s shows %q:\n%s", what, secret, text)
		}
	}
	if contains(a.out.String(), "on the command line") {
		t.Errorf("a warning about credentials on the command line, which holds none:\n%s", a.out)
	}
}
