package server

import (
	"crypto/tls"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/podline/podline/internal/filestamp"
)

// CertFiles is a serving certificate read from its files and read again
// when they change, as the kubelet serves --tls-cert-file: a pair an
// operator rotates is served from the next handshake on, without a
// restart. A pair that does not load leaves the last good one in service.
type CertFiles struct {
	certFile, keyFile string

	cur   atomic.Pointer[tls.Certificate]
	mu    sync.Mutex // serialises Reload
	stamp string
}

// LoadCertFiles reads the pair; it must load.
func LoadCertFiles(certFile, keyFile string) (*CertFiles, error) {
	c := &CertFiles{certFile: certFile, keyFile: keyFile}
	if _, err := c.Reload(); err != nil {
		return nil, err
	}
	return c, nil
}

// GetCertificate serves the current pair: tls.Config.GetCertificate.
func (c *CertFiles) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	return c.cur.Load(), nil
}

// Reload reads the pair again if either file changed, and says whether
// the served pair changed.
func (c *CertFiles) Reload() (bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	stamp, err := filestamp.Of(c.certFile, c.keyFile)
	if err != nil {
		return false, fmt.Errorf("serving certificate: %w", err)
	}
	if stamp == c.stamp {
		return false, nil
	}
	pair, err := tls.LoadX509KeyPair(c.certFile, c.keyFile)
	if err != nil {
		// Half of a rotation (a new certificate, the old key) fails
		// here too: the next look finds both.
		return false, fmt.Errorf("load serving certificate %s: %w", c.certFile, err)
	}
	c.cur.Store(&pair)
	c.stamp = stamp
	return true, nil
}
