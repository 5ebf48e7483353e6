//go:build e2e

package e2e

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
)

// bootstrapLife is how long the node's first client certificate lasts in
// TestClusterClientCertificateRotation: past it, only a renewed one gets
// podline's requests through. The renewed one is in --cert-dir about 7 s
// after podline starts.
func bootstrapLife() time.Duration { return sized(75*time.Second, 30*time.Second) }

// With --rotate-certificates, podline asks for a client certificate of its
// own through a kube-apiserver-client-kubelet CSR as soon as it starts
// from the kubeconfig's, keeps it in --cert-dir, and reconnects with it:
// its lease is still renewed after the kubeconfig's certificate expired.
func TestClusterClientCertificateRotation(t *testing.T) {
	certDir := t.TempDir()
	var expires time.Time
	n := startNodeVia(t, func(cp *controlPlane, kubeconfig string) string {
		path, notAfter := shortLivedKubeconfig(t, kubeconfig, bootstrapLife())
		expires = notAfter
		return path
	}, "--rotate-certificates", "--cert-dir", certDir)
	n.waitReady(60 * time.Second)

	csrs := n.cp.admin.CertificatesV1().CertificateSigningRequests()
	var csr *certificatesv1.CertificateSigningRequest
	eventually(t, 30*time.Second, "a kube-apiserver-client-kubelet CSR from the node", func() (bool, string) {
		list, err := csrs.List(apiCtx, metav1.ListOptions{})
		if err != nil {
			return false, err.Error()
		}
		for i := range list.Items {
			c := &list.Items[i]
			if c.Spec.SignerName == certificatesv1.KubeAPIServerClientKubeletSignerName && c.Spec.Username == "system:node:"+n.name {
				csr = c
				return true, ""
			}
		}
		return false, fmt.Sprintf("%d CSRs, none from the node", len(list.Items))
	})
	t.Cleanup(func() { csrs.Delete(apiCtx, csr.Name, metav1.DeleteOptions{}) })
	if !csrApproved(csr) {
		csr.Status.Conditions = append(csr.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{
			Type: certificatesv1.CertificateApproved, Status: v1.ConditionTrue, Reason: "E2E", Message: "approved by the test"})
		if _, err := csrs.UpdateApproval(apiCtx, csr.Name, csr, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	var renewed *x509.Certificate
	eventually(t, 60*time.Second, "the signed certificate in --cert-dir", func() (bool, string) {
		b, err := os.ReadFile(filepath.Join(certDir, "kubelet-client-current.pem"))
		if err != nil {
			return false, err.Error()
		}
		for blk, rest := pem.Decode(b); blk != nil; blk, rest = pem.Decode(rest) {
			if blk.Type != "CERTIFICATE" {
				continue
			}
			c, err := x509.ParseCertificate(blk.Bytes)
			if err != nil {
				return false, err.Error()
			}
			renewed = c
			return c.NotAfter.After(expires.Add(time.Hour)) && c.Subject.CommonName == "system:node:"+n.name,
				fmt.Sprintf("subject %q, valid until %s", c.Subject.CommonName, c.NotAfter)
		}
		return false, "no certificate in the file"
	})
	t.Logf("renewed client certificate: %s, issued by %s, valid until %s",
		renewed.Subject.CommonName, renewed.Issuer.CommonName, renewed.NotAfter.Format(time.RFC3339))

	// Past the first certificate's end, the lease is renewed only if the
	// requests carry the new one.
	if d := time.Until(expires); d > 0 {
		t.Logf("waiting %s for the kubeconfig's certificate to expire", d.Round(time.Second))
		time.Sleep(d)
	}
	leases := n.cp.admin.CoordinationV1().Leases("kube-node-lease")
	eventually(t, 40*time.Second, "the lease renewed after the first certificate expired", func() (bool, string) {
		l, err := leases.Get(apiCtx, n.name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		if l.Spec.RenewTime == nil {
			return false, "no renewTime"
		}
		return l.Spec.RenewTime.After(expires.Add(time.Second)),
			fmt.Sprintf("renewed at %s, the first certificate expired at %s", l.Spec.RenewTime.Format(time.RFC3339), expires.Format(time.RFC3339))
	})
	if node := n.waitReady(10 * time.Second); node == nil {
		t.Fatal("node not Ready after the rotation")
	}
}

func csrApproved(c *certificatesv1.CertificateSigningRequest) bool {
	for _, cond := range c.Status.Conditions {
		if cond.Type == certificatesv1.CertificateApproved && cond.Status == v1.ConditionTrue {
			return true
		}
	}
	return false
}

// shortLivedKubeconfig writes a copy of the node kubeconfig at path whose
// client certificate, for the same node, is signed by the cluster CA (in
// the pki directory beside the nodes' kubeconfigs) and expires after life.
func shortLivedKubeconfig(t *testing.T, path string, life time.Duration) (string, time.Time) {
	t.Helper()
	cfg, err := clientcmd.LoadFromFile(path)
	if err != nil {
		t.Fatal(err)
	}
	user := cfg.AuthInfos[cfg.Contexts[cfg.CurrentContext].AuthInfo]
	certPEM := user.ClientCertificateData
	if len(certPEM) == 0 {
		if certPEM, err = os.ReadFile(user.ClientCertificate); err != nil {
			t.Fatal(err)
		}
	}
	blk, _ := pem.Decode(certPEM)
	if blk == nil {
		t.Fatalf("%s: no client certificate", path)
	}
	nodeCert, err := x509.ParseCertificate(blk.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	pki := filepath.Join(filepath.Dir(filepath.Dir(path)), "pki")
	caCert, caKey := loadCA(t, pki)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(now.UnixNano()),
		Subject:      pkix.Name{CommonName: nodeCert.Subject.CommonName, Organization: nodeCert.Subject.Organization},
		NotBefore:    now.Add(-time.Minute),
		NotAfter:     now.Add(life),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	user.ClientCertificate, user.ClientKey = "", ""
	user.ClientCertificateData = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	user.ClientKeyData = pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder})
	out := filepath.Join(t.TempDir(), "short-lived.kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, out); err != nil {
		t.Fatal(err)
	}
	return out, tmpl.NotAfter
}

func loadCA(t *testing.T, pki string) (*x509.Certificate, any) {
	t.Helper()
	read := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join(pki, name))
		if err != nil {
			t.Fatal(err)
		}
		blk, _ := pem.Decode(b)
		if blk == nil {
			t.Fatalf("%s/%s: no PEM block", pki, name)
		}
		return blk.Bytes
	}
	ca, err := x509.ParseCertificate(read("ca.crt"))
	if err != nil {
		t.Fatal(err)
	}
	der := read("ca.key")
	key, err := x509.ParsePKCS8PrivateKey(der)
	if err != nil {
		if key, err = x509.ParseECPrivateKey(der); err != nil {
			t.Fatalf("%s/ca.key: %v", pki, err)
		}
	}
	return ca, key
}
