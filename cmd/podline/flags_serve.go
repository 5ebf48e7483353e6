package main

import (
	"flag"
	"fmt"
	"strconv"
	"time"

	"github.com/podline/podline/server"
)

// servingOptions are the authenticated port's flags, named as the
// kubelet's. Webhook authentication and authorization are on by default
// in cluster mode; anonymous requests are refused unless asked for, which
// is deliberately stricter than the kubelet's default.
type servingOptions struct {
	tlsCertFile, tlsKeyFile string
	certDir                 string
	tlsMinVersion           string
	tlsCipherSuites         listFlag
	rotateServerCerts       bool
	rotateCerts             bool

	clientCAFile      string
	anonymousAuth     bool
	tokenWebhook      optBool
	tokenWebhookTTL   time.Duration
	authorizationMode string
	authzAllowedTTL   time.Duration
	authzDeniedTTL    time.Duration

	debuggingHandlers bool
}

// optBool is a boolean flag that knows whether it was given, for defaults
// that depend on other flags.
type optBool struct {
	set, value bool
}

func (b *optBool) String() string   { return strconv.FormatBool(b.value) }
func (b *optBool) IsBoolFlag() bool { return true }
func (b *optBool) Set(v string) error {
	x, err := strconv.ParseBool(v)
	if err != nil {
		return err
	}
	b.set, b.value = true, x
	return nil
}

// or is the flag's value, or def when it was not given.
func (b optBool) or(def bool) bool {
	if b.set {
		return b.value
	}
	return def
}

func addServingFlags(fs *flag.FlagSet, o *servingOptions) {
	fs.StringVar(&o.tlsCertFile, "tls-cert-file", "", "Serving certificate of the authenticated port (with intermediates after it); default: a self-signed one made in --cert-dir.")
	fs.StringVar(&o.tlsKeyFile, "tls-private-key-file", "", "Private key of --tls-cert-file.")
	fs.StringVar(&o.certDir, "cert-dir", "", "Directory of the serving certificates podline makes or rotates; default <root-dir>/pki.")
	fs.StringVar(&o.tlsMinVersion, "tls-min-version", "VersionTLS12", "Lowest TLS version served: VersionTLS12 or VersionTLS13.")
	fs.Var(&o.tlsCipherSuites, "tls-cipher-suites", "TLS 1.2 cipher suites, comma-separated Go names; default: ECDHE with AES-GCM or ChaCha20-Poly1305 only.")
	fs.BoolVar(&o.rotateCerts, "rotate-certificates", false, "Cluster mode: renew the client certificate podline reaches the API server with, through a kube-apiserver-client-kubelet CertificateSigningRequest, before it expires; kept in --cert-dir (kubelet-client-current.pem).")
	fs.BoolVar(&o.rotateServerCerts, "rotate-server-certificates", false, "Cluster mode: get the serving certificate from a kubelet-serving CertificateSigningRequest and renew it before it expires.")
	fs.StringVar(&o.clientCAFile, "client-ca-file", "", "CA bundle that client certificates of the authenticated port are verified against.")
	fs.BoolVar(&o.anonymousAuth, "anonymous-auth", false, "Serve requests without credentials as system:anonymous (still subject to authorization).")
	fs.Var(&o.tokenWebhook, "authentication-token-webhook", "Authenticate bearer tokens with the TokenReview API; default true with --kubeconfig.")
	fs.DurationVar(&o.tokenWebhookTTL, "authentication-token-webhook-cache-ttl", 2*time.Minute, "How long TokenReview answers are cached.")
	fs.StringVar(&o.authorizationMode, "authorization-mode", "", "'Webhook' (a SubjectAccessReview per request) or 'AlwaysAllow'; default Webhook with --kubeconfig, AlwaysAllow without.")
	fs.DurationVar(&o.authzAllowedTTL, "authorization-webhook-cache-authorized-ttl", 5*time.Minute, "How long an allowed SubjectAccessReview is cached.")
	fs.DurationVar(&o.authzDeniedTTL, "authorization-webhook-cache-unauthorized-ttl", 30*time.Second, "How long a denied SubjectAccessReview is cached.")
	fs.BoolVar(&o.debuggingHandlers, "enable-debugging-handlers", true, "Serve /debug/pprof/ on the authenticated port (requires the proxy permission).")
}

// validate checks the serving flags against each other; cluster says
// whether --kubeconfig was given.
func (o *servingOptions) validate(cluster bool) error {
	if (o.tlsCertFile == "") != (o.tlsKeyFile == "") {
		return fmt.Errorf("--tls-cert-file and --tls-private-key-file go together")
	}
	if _, err := server.TLSVersion(o.tlsMinVersion); err != nil {
		return err
	}
	if _, _, err := server.CipherSuites(o.tlsCipherSuites); err != nil {
		return err
	}
	switch o.mode(cluster) {
	case "Webhook":
		if !cluster {
			return fmt.Errorf("--authorization-mode=Webhook needs --kubeconfig")
		}
	case "AlwaysAllow":
	default:
		return fmt.Errorf("--authorization-mode %q: want Webhook or AlwaysAllow", o.authorizationMode)
	}
	if o.anonymousAuth && o.mode(cluster) == "AlwaysAllow" {
		return fmt.Errorf("--anonymous-auth with --authorization-mode=AlwaysAllow would let anyone who reaches the port exec into every container; use Webhook authorization (with --kubeconfig) or leave anonymous off")
	}
	if o.tokenWebhook.or(cluster) && !cluster {
		return fmt.Errorf("--authentication-token-webhook needs --kubeconfig")
	}
	if o.rotateServerCerts && !cluster {
		return fmt.Errorf("--rotate-server-certificates needs --kubeconfig")
	}
	if o.rotateCerts && !cluster {
		return fmt.Errorf("--rotate-certificates needs --kubeconfig")
	}
	for _, c := range []struct {
		d    time.Duration
		flag string
	}{{o.tokenWebhookTTL, "--authentication-token-webhook-cache-ttl"}, {o.authzAllowedTTL, "--authorization-webhook-cache-authorized-ttl"}, {o.authzDeniedTTL, "--authorization-webhook-cache-unauthorized-ttl"}} {
		if c.d < 0 {
			return fmt.Errorf("%s must not be negative", c.flag)
		}
	}
	return nil
}

// mode is --authorization-mode, or its default.
func (o *servingOptions) mode(cluster bool) string {
	switch {
	case o.authorizationMode != "":
		return o.authorizationMode
	case cluster:
		return "Webhook"
	}
	return "AlwaysAllow"
}
