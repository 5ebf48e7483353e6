package auth

import (
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"fmt"
	"net/http"
	"os"
	"sync"
	"sync/atomic"

	"github.com/podline/podline/internal/filestamp"
)

// CredentialIDKey is the Extra key under which the apiserver records which
// credential authenticated a user; podline fills it for certificates, so
// that an audit of SubjectAccessReviews can tell two certificates of one
// user apart.
const CredentialIDKey = "authentication.kubernetes.io/credential-id"

// X509Authenticator authenticates a client certificate of the TLS
// connection: user = Subject.CommonName, groups = Subject.Organization.
type X509Authenticator struct {
	// roots can be swapped while requests are served, for a reloaded
	// --client-ca-file.
	roots atomic.Pointer[x509.CertPool]
}

// NewX509Authenticator verifies client certificates against roots.
func NewX509Authenticator(roots *x509.CertPool) *X509Authenticator {
	a := &X509Authenticator{}
	a.roots.Store(roots)
	return a
}

// SetRoots replaces the CA pool, for a CA bundle that was rotated.
func (a *X509Authenticator) SetRoots(roots *x509.CertPool) { a.roots.Store(roots) }

// ClientCAFile is --client-ca-file, read again into an authenticator's
// roots when the file changes, as the kubelet reloads it: a CA bundle an
// operator rotates is trusted from the next request on. A bundle that
// does not load leaves the last good one in force.
type ClientCAFile struct {
	path  string
	a     *X509Authenticator
	mu    sync.Mutex
	stamp string
}

// NewClientCAFile reads path, which must load, and returns the
// authenticator that verifies against it.
func NewClientCAFile(path string) (*ClientCAFile, *X509Authenticator, error) {
	f := &ClientCAFile{path: path, a: NewX509Authenticator(nil)}
	if _, err := f.Reload(); err != nil {
		return nil, nil, err
	}
	return f, f.a, nil
}

// Reload reads the bundle again if the file changed, and says whether the
// roots changed.
func (f *ClientCAFile) Reload() (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	stamp, err := filestamp.Of(f.path)
	if err != nil {
		return false, fmt.Errorf("client CA bundle: %w", err)
	}
	if stamp == f.stamp {
		return false, nil
	}
	roots, err := LoadClientCA(f.path)
	if err != nil {
		return false, err
	}
	f.a.SetRoots(roots)
	f.stamp = stamp
	return true, nil
}

// LoadClientCA reads a PEM CA bundle (--client-ca-file).
func LoadClientCA(path string) (*x509.CertPool, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read client CA bundle: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(data) {
		return nil, fmt.Errorf("client CA bundle %s: no PEM certificate in it", path)
	}
	return pool, nil
}

// Authenticate verifies the peer's leaf certificate for client use, with
// the rest of the chain it sent as intermediates. No certificate is not an
// error (another method may apply); a certificate that does not verify is,
// so that a bad certificate is never taken for an anonymous request.
func (a *X509Authenticator) Authenticate(r *http.Request) (*User, bool, error) {
	if r.TLS == nil || len(r.TLS.PeerCertificates) == 0 {
		return nil, false, nil
	}
	roots := a.roots.Load()
	if roots == nil {
		return nil, false, nil
	}
	leaf := r.TLS.PeerCertificates[0]
	opts := x509.VerifyOptions{
		Roots:     roots,
		KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	if len(r.TLS.PeerCertificates) > 1 {
		opts.Intermediates = x509.NewCertPool()
		for _, c := range r.TLS.PeerCertificates[1:] {
			opts.Intermediates.AddCert(c)
		}
	}
	if _, err := leaf.Verify(opts); err != nil {
		return nil, false, fmt.Errorf("verify client certificate (subject %q, serial %s): %w", leaf.Subject.CommonName, leaf.SerialNumber, err)
	}
	if leaf.Subject.CommonName == "" {
		// A verified certificate without a name identifies nobody; the
		// apiserver treats it as no credential, and so does podline.
		return nil, false, nil
	}
	fp := sha256.Sum256(leaf.Raw)
	return &User{
		Name:   leaf.Subject.CommonName,
		Groups: append([]string(nil), leaf.Subject.Organization...),
		Extra:  map[string][]string{CredentialIDKey: {"X509SHA256=" + hex.EncodeToString(fp[:])}},
	}, true, nil
}
