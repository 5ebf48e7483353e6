package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/certificate"

	"github.com/podline/podline/kubeapi"
)

// clientCertCheck is how often podline looks for a renewed client
// certificate. The manager renews at 70–90 % of the certificate's life,
// so the old one stays valid long after; the check only bounds how long
// open connections go on presenting it.
var clientCertCheck = 10 * time.Second

// clientCertManager keeps podline's client certificate for the API server
// in --cert-dir (kubelet-client-current.pem, as the kubelet's), starting
// from the kubeconfig's, and renews it through a
// kube-apiserver-client-kubelet CSR (the controller-manager approves a
// node renewing its own) before it expires. As the kubelet's, it asks for
// a certificate of its own at once when it starts from the kubeconfig's.
func (a *agent) clientCertManager(clientset func() kubernetes.Interface) (certificate.Manager, error) {
	dir := a.certDir()
	certPEM, keyPEM, err := kubeapi.ClientCertPEM(a.o.kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("--rotate-certificates: %w", err)
	}
	store, err := certificate.NewFileStore("kubelet-client", dir, dir, "", "")
	if err != nil {
		return nil, fmt.Errorf("--rotate-certificates: certificate store in %s: %w", dir, err)
	}
	name := a.node.Name
	return certificate.NewManager(&certificate.Config{
		ClientsetFn: func(*tls.Certificate) (kubernetes.Interface, error) { return clientset(), nil },
		GetTemplate: func() *x509.CertificateRequest {
			return &x509.CertificateRequest{
				Subject: pkix.Name{CommonName: "system:node:" + name, Organization: []string{"system:nodes"}},
			}
		},
		SignerName:              certificatesv1.KubeAPIServerClientKubeletSignerName,
		Usages:                  []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth},
		CertificateStore:        store,
		BootstrapCertificatePEM: certPEM,
		BootstrapKeyPEM:         keyPEM,
		Name:                    "client",
	})
}

// rotateClientCert runs the manager until ctx ends and, whenever it holds
// a new certificate, closes the connections made with the old one.
func (c *cluster) rotateClientCert(ctx context.Context) {
	c.clientCert.Start()
	defer c.clientCert.Stop()
	last := c.clientCert.Current()
	wait.UntilWithContext(ctx, func(context.Context) {
		if cur := c.clientCert.Current(); cur != last {
			last = cur
			c.clients.CertRotated()
			c.log.Info("client certificate renewed; reconnecting to the API server with it", "notAfter", leafNotAfter(cur))
		}
	}, clientCertCheck)
}

func leafNotAfter(c *tls.Certificate) string {
	if c == nil || c.Leaf == nil {
		return ""
	}
	return c.Leaf.NotAfter.Format(time.RFC3339)
}
