package server

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"

	certutil "k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/keyutil"
)

// TLSOptions are the serving flags of the authenticated port, as the
// kubelet names them.
type TLSOptions struct {
	CertFile, KeyFile string // --tls-cert-file, --tls-private-key-file
	CertDir           string // --cert-dir: where a self-signed pair is made
	MinVersion        string // --tls-min-version: VersionTLS12 or VersionTLS13
	CipherSuites      []string
	// Hostname and IPs go into a self-signed certificate.
	Hostname string
	IPs      []net.IP
}

// defaultCiphers are forward-secret AEAD suites only. Go's own default
// also allows RSA key exchange and CBC, which nothing talking to a node
// agent needs. (TLS 1.3 suites are not configurable and all qualify.)
var defaultCiphers = []uint16{
	tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
	tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
	tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
	tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
	tls.TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
	tls.TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
}

// TLSVersion parses a --tls-min-version value; "" is TLS 1.2.
func TLSVersion(name string) (uint16, error) {
	switch name {
	case "", "VersionTLS12":
		return tls.VersionTLS12, nil
	case "VersionTLS13":
		return tls.VersionTLS13, nil
	case "VersionTLS10", "VersionTLS11":
		return 0, fmt.Errorf("--tls-min-version %s: versions below TLS 1.2 are refused", name)
	}
	return 0, fmt.Errorf("--tls-min-version %q: want VersionTLS12 or VersionTLS13", name)
}

// cipherAliases are the older names of suites, which the kubelet's flag
// still takes.
var cipherAliases = map[string]uint16{
	"TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305":   tls.TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
	"TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305": tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
}

// CipherSuites parses --tls-cipher-suites names (Go's, and the kubelet's
// aliases); none means the forward-secret AEAD default. A suite Go counts
// as insecure is taken, as the kubelet takes it (hardening guides still
// list some), and named in weak so that the caller can say so.
func CipherSuites(names []string) (ids []uint16, weak []string, err error) {
	if len(names) == 0 {
		return defaultCiphers, nil, nil
	}
	known := map[string]uint16{}
	for _, s := range tls.CipherSuites() {
		known[s.Name] = s.ID
	}
	insecure := map[string]uint16{}
	for _, s := range tls.InsecureCipherSuites() {
		insecure[s.Name] = s.ID
	}
	for _, n := range names {
		n = strings.TrimSpace(n)
		if id, ok := known[n]; ok {
			ids = append(ids, id)
		} else if id, ok := cipherAliases[n]; ok {
			ids = append(ids, id)
		} else if id, ok := insecure[n]; ok {
			ids = append(ids, id)
			weak = append(weak, n)
		} else {
			return nil, nil, fmt.Errorf("--tls-cipher-suites: unknown suite %q", n)
		}
	}
	return ids, weak, nil
}

// ServingPair returns the cert and key files to serve with: the flags' own,
// or a self-signed pair under CertDir, made once and reused (kubelet.crt,
// kubelet.key, as the kubelet names them).
func (o TLSOptions) ServingPair() (certFile, keyFile string, err error) {
	if (o.CertFile == "") != (o.KeyFile == "") {
		return "", "", errors.New("--tls-cert-file and --tls-private-key-file go together")
	}
	if o.CertFile != "" {
		return o.CertFile, o.KeyFile, nil
	}
	if o.CertDir == "" {
		return "", "", errors.New("no --tls-cert-file and no --cert-dir to make a self-signed certificate in")
	}
	certFile, keyFile = filepath.Join(o.CertDir, "kubelet.crt"), filepath.Join(o.CertDir, "kubelet.key")
	if ok, _ := certutil.CanReadCertAndKey(certFile, keyFile); ok {
		return certFile, keyFile, nil
	}
	cert, key, err := certutil.GenerateSelfSignedCertKey(o.Hostname, o.IPs, nil)
	if err != nil {
		return "", "", fmt.Errorf("make a self-signed serving certificate: %w", err)
	}
	if err := os.MkdirAll(o.CertDir, 0o700); err != nil {
		return "", "", fmt.Errorf("--cert-dir: %w", err)
	}
	if err := certutil.WriteCert(certFile, cert); err != nil {
		return "", "", fmt.Errorf("write %s: %w", certFile, err)
	}
	if err := keyutil.WriteKey(keyFile, key); err != nil {
		return "", "", fmt.Errorf("write %s: %w", keyFile, err)
	}
	return certFile, keyFile, nil
}

// Config builds the server's TLS configuration. Client certificates are
// asked for but not required: a bearer token is another way in, and the
// authenticator verifies a certificate against the client CA itself.
// getCert, when set, serves a rotating certificate instead of the files;
// otherwise the files are served and returned, to be reloaded.
func (o TLSOptions) Config(getCert func(*tls.ClientHelloInfo) (*tls.Certificate, error)) (*tls.Config, *CertFiles, error) {
	min, err := TLSVersion(o.MinVersion)
	if err != nil {
		return nil, nil, err
	}
	suites, _, err := CipherSuites(o.CipherSuites)
	if err != nil {
		return nil, nil, err
	}
	cfg := &tls.Config{
		MinVersion:   min,
		CipherSuites: suites,
		ClientAuth:   tls.RequestClientCert,
		NextProtos:   []string{"http/1.1"}, // streams upgrade HTTP/1.1 connections
	}
	if getCert != nil {
		cfg.GetCertificate = getCert
		return cfg, nil, nil
	}
	certFile, keyFile, err := o.ServingPair()
	if err != nil {
		return nil, nil, err
	}
	files, err := LoadCertFiles(certFile, keyFile)
	if err != nil {
		return nil, nil, err
	}
	cfg.GetCertificate = files.GetCertificate
	return cfg, files, nil
}
