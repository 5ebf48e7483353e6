package kubeapi

import (
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"os"
	"time"

	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/connrotation"
)

// A rotated client certificate (--rotate-certificates) reaches every
// request through the TLS handshake: the transport asks for the current
// certificate each time it dials, and CertRotated closes the connections
// made with the old one, so that the next request dials again. Without the
// close, an HTTP/2 connection to the API server lives as long as the node
// and would go on presenting a certificate that expires.

// rotatingTransport makes rc present cert's current certificate, keeping
// the kubeconfig's server name and CA. It returns the dialer whose
// connections CertRotated closes.
func rotatingTransport(rc *rest.Config, cert func() *tls.Certificate) (*connrotation.Dialer, error) {
	tlsCfg, err := rest.TLSConfigFor(rc)
	if err != nil {
		return nil, err
	}
	if tlsCfg == nil {
		return nil, fmt.Errorf("--rotate-certificates: the API server is not reached over TLS")
	}
	tlsCfg.Certificates = nil
	tlsCfg.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
		if c := cert(); c != nil {
			return c, nil
		}
		// No certificate yet: the handshake goes on without one, as with
		// a token-only kubeconfig.
		return &tls.Certificate{}, nil
	}
	d := connrotation.NewDialer((&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext)
	rc.Transport = utilnet.SetTransportDefaults(&http.Transport{
		Proxy:               http.ProxyFromEnvironment,
		TLSHandshakeTimeout: 10 * time.Second,
		TLSClientConfig:     tlsCfg,
		MaxIdleConnsPerHost: 25,
		DialContext:         d.DialContext,
	})
	// A config with its own transport must carry no TLS options of its
	// own; the server name and CA are in tlsCfg.
	rc.TLSClientConfig = rest.TLSClientConfig{}
	return d, nil
}

// ClientCertPEM reads the client certificate and key the kubeconfig at
// path names (inline or in files): what a rotated certificate starts
// from. Both are nil when it authenticates some other way.
func ClientCertPEM(path string) (cert, key []byte, err error) {
	rc, err := loadKubeconfig(path)
	if err != nil {
		return nil, nil, err
	}
	t := rc.TLSClientConfig
	cert, key = t.CertData, t.KeyData
	if len(cert) == 0 && t.CertFile != "" {
		if cert, err = os.ReadFile(t.CertFile); err != nil {
			return nil, nil, fmt.Errorf("kubeconfig %s: client certificate: %w", path, err)
		}
	}
	if len(key) == 0 && t.KeyFile != "" {
		if key, err = os.ReadFile(t.KeyFile); err != nil {
			return nil, nil, fmt.Errorf("kubeconfig %s: client key: %w", path, err)
		}
	}
	return cert, key, nil
}
