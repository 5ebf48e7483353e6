package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"strconv"

	certificatesv1 "k8s.io/api/certificates/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/certificate"

	"github.com/podline/podline/logs"
	"github.com/podline/podline/machine"
	"github.com/podline/podline/prober"
	"github.com/podline/podline/server"
	"github.com/podline/podline/server/auth"
)

// nodeLogDir is what /logs/ serves, as the kubelet serves it.
const nodeLogDir = "/var/log"

// serveSecure starts the authenticated port: TLS, then authentication and
// authorization of every request, then the kubelet's endpoints.
func (a *agent) serveSecure(ctx context.Context, healthz http.Handler) error {
	o := a.o.serve
	cluster := a.cluster != nil
	var getCert func(*tls.ClientHelloInfo) (*tls.Certificate, error)
	if o.rotateServerCerts {
		mgr, err := a.servingCertManager()
		if err != nil {
			return err
		}
		mgr.Start()
		go func() { <-ctx.Done(); mgr.Stop() }()
		getCert = func(*tls.ClientHelloInfo) (*tls.Certificate, error) {
			if c := mgr.Current(); c != nil {
				return c, nil
			}
			return nil, errors.New("no serving certificate yet: the kubelet-serving CSR is not approved")
		}
	}
	tlsCfg, certFiles, err := a.tlsOptions().Config(getCert)
	if err != nil {
		return err
	}
	if _, weak, _ := server.CipherSuites(o.tlsCipherSuites); len(weak) > 0 {
		a.log.Warn("--tls-cipher-suites: suites without forward secrecy or with known weaknesses are enabled", "suites", weak)
	}

	authnCfg := auth.AuthnConfig{
		ClientCAFile: o.clientCAFile,
		Anonymous:    o.anonymousAuth,
		Token:        auth.TokenOptions{CacheTTL: o.tokenWebhookTTL},
	}
	var caFile *auth.ClientCAFile
	if o.clientCAFile != "" {
		if caFile, authnCfg.ClientCA, err = auth.NewClientCAFile(o.clientCAFile); err != nil {
			return fmt.Errorf("--client-ca-file: %w", err)
		}
	}
	go a.reloadServingFiles(ctx, certFiles, caFile)
	authzCfg := auth.AuthzConfig{
		Mode:    o.mode(cluster),
		Webhook: auth.WebhookOptions{AuthorizedTTL: o.authzAllowedTTL, UnauthorizedTTL: o.authzDeniedTTL},
	}
	if cluster {
		if o.tokenWebhook.or(true) {
			authnCfg.TokenReviews = a.cluster.client.AuthenticationV1().TokenReviews()
		}
		authzCfg.SubjectAccessReviews = a.cluster.client.AuthorizationV1().SubjectAccessReviews()
	}
	authn, err := auth.NewAuthenticator(authnCfg)
	if err != nil {
		return err
	}
	authz, err := auth.NewAuthorizer(authzCfg)
	if err != nil {
		return err
	}
	switch {
	case authzCfg.Mode == auth.ModeAlwaysAllow:
		a.log.Warn("authenticated port: --authorization-mode=AlwaysAllow: every authenticated request may do everything, exec included")
	}
	if authnCfg.ClientCAFile == "" && authnCfg.TokenReviews == nil && !authnCfg.Anonymous {
		a.log.Warn("authenticated port: no --client-ca-file, no token webhook and no --anonymous-auth: every request is refused (401)")
	}

	secure := &server.Secure{
		ReadOnly: server.ReadOnly{Pods: a.statuses.Pods, PodsJSON: a.statuses.PodsJSON, Machine: func() *machine.Info { return a.machine },
			Stats: a.stats.Collect, Healthz: healthz, Probes: prober.Metrics},
		Locator:    &locator{statuses: a.statuses, cache: a.cache, node: a.node},
		Streamer:   a.runtime,
		PodLogsDir: a.node.LogsDir,
		// The kubelet's place for them: checkpoints under --root-dir.
		Checkpointer:  a.runtime,
		CheckpointDir: filepath.Join(a.o.rootDir, "checkpoints"),
		NodeLogs:      logs.NodeLogs(nodeLogDir),
		Configz:       a.o.configz,
		Debugging:     o.debuggingHandlers,
		Log:           a.log,
		Cmdline:       a.o.cmdline,
	}
	h := auth.Filter(secure.Handler(), authn, authz, a.node.Name, a.log)
	addr := net.JoinHostPort(a.o.address, strconv.Itoa(a.o.port))
	return server.Serve(ctx, addr, h, tlsCfg, a.log)
}

func (a *agent) certDir() string {
	if a.o.serve.certDir != "" {
		return a.o.serve.certDir
	}
	return filepath.Join(a.o.rootDir, "pki")
}

func (a *agent) tlsOptions() server.TLSOptions {
	o := a.o.serve
	var ips []net.IP
	for _, ip := range a.node.IPs {
		ips = append(ips, net.ParseIP(ip))
	}
	return server.TLSOptions{
		CertFile: o.tlsCertFile, KeyFile: o.tlsKeyFile, CertDir: a.certDir(),
		MinVersion: o.tlsMinVersion, CipherSuites: o.tlsCipherSuites,
		Hostname: a.node.Name, IPs: ips,
	}
}

// servingCertManager gets the serving certificate from a kubelet-serving
// CSR, keeps it in --cert-dir (kubelet-server-current.pem, as the
// kubelet's) and renews it before it expires.
func (a *agent) servingCertManager() (certificate.Manager, error) {
	dir := a.certDir()
	o := a.o.serve
	store, err := certificate.NewFileStore("kubelet-server", dir, dir, o.tlsCertFile, o.tlsKeyFile)
	if err != nil {
		return nil, fmt.Errorf("--rotate-server-certificates: certificate store in %s: %w", dir, err)
	}
	client := a.cluster.client
	name := a.node.Name
	opts := a.tlsOptions()
	return certificate.NewManager(&certificate.Config{
		ClientsetFn: func(*tls.Certificate) (kubernetes.Interface, error) { return client, nil },
		GetTemplate: func() *x509.CertificateRequest {
			return &x509.CertificateRequest{
				Subject:     pkix.Name{CommonName: "system:node:" + name, Organization: []string{"system:nodes"}},
				DNSNames:    []string{name},
				IPAddresses: opts.IPs,
			}
		},
		SignerName:       certificatesv1.KubeletServingSignerName,
		Usages:           []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageServerAuth},
		CertificateStore: store,
	})
}
