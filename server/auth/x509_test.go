package auth

import (
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

func TestX509Authenticate(t *testing.T) {
	ca := newCA(t, "cluster-ca")
	other := newCA(t, "other-ca")
	inter := ca.intermediate(t, "intermediate")

	good, _ := ca.client(t, "alice", []string{"devs", "ops"}, leafOpts{})
	fromOther, _ := other.client(t, "mallory", []string{"system:masters"}, leafOpts{})
	expired, _ := ca.client(t, "old", nil, leafOpts{notAfter: time.Now().Add(-time.Minute)})
	serverOnly, _ := ca.client(t, "server", nil, leafOpts{usage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}})
	viaInter, _ := inter.client(t, "bob", []string{"devs"}, leafOpts{})
	nameless, _ := ca.client(t, "", []string{"devs"}, leafOpts{})

	a := NewX509Authenticator(ca.pool())
	tests := []struct {
		name    string
		chain   []*x509.Certificate
		noTLS   bool
		want    string
		groups  []string
		wantOK  bool
		wantErr bool
	}{
		{name: "no TLS", noTLS: true},
		{name: "no certificate"},
		{name: "good", chain: []*x509.Certificate{good}, want: "alice", groups: []string{"devs", "ops"}, wantOK: true},
		{name: "another CA", chain: []*x509.Certificate{fromOther}, wantErr: true},
		{name: "expired", chain: []*x509.Certificate{expired}, wantErr: true},
		{name: "not for client auth", chain: []*x509.Certificate{serverOnly}, wantErr: true},
		{name: "intermediate sent", chain: []*x509.Certificate{viaInter, inter.cert}, want: "bob", groups: []string{"devs"}, wantOK: true},
		{name: "intermediate missing", chain: []*x509.Certificate{viaInter}, wantErr: true},
		{name: "no common name", chain: []*x509.Certificate{nameless}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "/pods", nil)
			if tt.noTLS {
				r.TLS = nil
			} else {
				r.TLS = &tls.ConnectionState{PeerCertificates: tt.chain}
			}
			u, ok, err := a.Authenticate(r)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, want error %v", err, tt.wantErr)
			}
			if ok != tt.wantOK {
				t.Fatalf("ok = %v, want %v", ok, tt.wantOK)
			}
			if !ok {
				if u != nil {
					t.Fatalf("user %+v without ok", u)
				}
				return
			}
			// Organization is a SET in the certificate: its order is the
			// encoding's, not the request's.
			if u.Name != tt.want || !slices.Equal(slices.Sorted(slices.Values(u.Groups)), tt.groups) {
				t.Fatalf("user = %q %v, want %q %v", u.Name, u.Groups, tt.want, tt.groups)
			}
			fp := sha256.Sum256(tt.chain[0].Raw)
			if got := u.Extra[CredentialIDKey]; len(got) != 1 || got[0] != "X509SHA256="+hex.EncodeToString(fp[:]) {
				t.Fatalf("credential id = %v", got)
			}
		})
	}
}

func TestX509SetRoots(t *testing.T) {
	oldCA, newCAx := newCA(t, "old"), newCA(t, "new")
	cert, _ := newCAx.client(t, "carol", nil, leafOpts{})
	a := NewX509Authenticator(oldCA.pool())
	r := httptest.NewRequest("GET", "/pods", nil)
	r.TLS = &tls.ConnectionState{PeerCertificates: []*x509.Certificate{cert}}
	if _, _, err := a.Authenticate(r); err == nil {
		t.Fatal("certificate of a CA not yet trusted was accepted")
	}
	a.SetRoots(newCAx.pool())
	if u, ok, err := a.Authenticate(r); err != nil || !ok || u.Name != "carol" {
		t.Fatalf("after rotation: %v %v %v", u, ok, err)
	}
}

func TestLoadClientCA(t *testing.T) {
	dir := t.TempDir()
	ca := newCA(t, "file-ca")
	good := filepath.Join(dir, "ca.crt")
	if err := os.WriteFile(good, ca.pem(), 0o600); err != nil {
		t.Fatal(err)
	}
	pool, err := LoadClientCA(good)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := ca.client(t, "dave", nil, leafOpts{})
	if _, err := cert.Verify(x509.VerifyOptions{Roots: pool, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Fatalf("pool from file does not verify its CA's certificate: %v", err)
	}

	junk := filepath.Join(dir, "junk")
	if err := os.WriteFile(junk, []byte("not pem"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadClientCA(junk); err == nil {
		t.Fatal("a file without certificates was accepted")
	}
	if _, err := LoadClientCA(filepath.Join(dir, "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("missing file: %v", err)
	}
}

// A --client-ca-file replaced on disk is trusted after a reload; a broken
// one leaves the last good bundle in force.
func TestClientCAFileReload(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "ca.crt")
	replace := func(data []byte) {
		t.Helper()
		if err := os.WriteFile(path+".new", data, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(path+".new", path); err != nil {
			t.Fatal(err)
		}
	}
	oldCA, newCAx := newCA(t, "old"), newCA(t, "new")
	replace(oldCA.pem())
	f, a, err := NewClientCAFile(path)
	if err != nil {
		t.Fatal(err)
	}
	request := func(ca *testCA, name string) error {
		cert, _ := ca.client(t, name, nil, leafOpts{})
		r := httptest.NewRequest("GET", "/pods", nil)
		r.TLS = &tls.ConnectionState{PeerCertificates: []*x509.Certificate{cert}}
		_, _, err := a.Authenticate(r)
		return err
	}
	if request(oldCA, "a") != nil || request(newCAx, "b") == nil {
		t.Fatal("before the rotation only the old CA should be trusted")
	}
	if changed, err := f.Reload(); changed || err != nil {
		t.Fatalf("reload with no change: %v, %v", changed, err)
	}
	replace(newCAx.pem())
	if changed, err := f.Reload(); !changed || err != nil {
		t.Fatalf("reload after the rotation: %v, %v", changed, err)
	}
	if request(newCAx, "c") != nil || request(oldCA, "d") == nil {
		t.Fatal("after the rotation only the new CA should be trusted")
	}
	replace([]byte("not pem"))
	if changed, err := f.Reload(); changed || err == nil {
		t.Fatalf("reload of a broken bundle: %v, %v", changed, err)
	}
	if request(newCAx, "e") != nil {
		t.Fatal("a broken bundle displaced the last good one")
	}
	if _, _, err := NewClientCAFile(filepath.Join(dir, "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("missing file: %v", err)
	}
}
