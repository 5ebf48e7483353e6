// Package kubeapi builds podline's connections to the API server. It owns
// the kubeconfig and the client-side rate limits (--kube-api-qps,
// --kube-api-burst, --event-qps, --event-burst), the Services cache and
// the watched configMaps and secrets (Objects); it holds no state about
// pods or nodes.
package kubeapi

import (
	"crypto/tls"
	"fmt"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/util/connrotation"
)

// Config is how podline reaches the API server.
type Config struct {
	Kubeconfig string
	QPS        float32
	Burst      int
	// UserAgent names podline and its version in the API server's logs.
	UserAgent string
	// ClientCert, if set, is the client certificate to present instead of
	// the kubeconfig's, asked for at every new connection
	// (--rotate-certificates).
	ClientCert func() *tls.Certificate
}

// Clients are podline's three connections, split as the kubelet splits
// them so that one kind of traffic cannot starve another: Pods for pods,
// volumes and statuses (--kube-api-qps/--kube-api-burst), Events for
// events (--event-qps/--event-burst), and Heartbeat, unthrottled, for the
// node status and lease, which must never wait behind a burst of pod
// starts or the node would be marked NotReady.
type Clients struct {
	Pods, Events, Heartbeat kubernetes.Interface

	dialer *connrotation.Dialer // nil unless Config.ClientCert
}

// CertRotated closes every connection to the API server, so that the
// next requests dial again and present the new client certificate.
func (c *Clients) CertRotated() {
	if c.dialer != nil {
		c.dialer.CloseAll()
	}
}

// NewClients loads the kubeconfig once and makes the three clients from
// it. eventQPS and eventBurst limit the events client.
func NewClients(c Config, eventQPS float32, eventBurst int) (*Clients, error) {
	registerMetrics()
	rc, err := loadKubeconfig(c.Kubeconfig)
	if err != nil {
		return nil, err
	}
	var out Clients
	if c.ClientCert != nil {
		if out.dialer, err = rotatingTransport(rc, c.ClientCert); err != nil {
			return nil, fmt.Errorf("kubeconfig %s: %w", c.Kubeconfig, err)
		}
	}
	if c.UserAgent != "" {
		rc.UserAgent = c.UserAgent
	}
	// Protobuf halves the bytes and the decode cost of pod lists and
	// watches; every built-in type podline uses speaks it.
	rc.ContentType = "application/vnd.kubernetes.protobuf"
	rc.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	for _, cl := range []struct {
		into  *kubernetes.Interface
		qps   float32
		burst int
	}{
		{&out.Pods, c.QPS, c.Burst},
		{&out.Events, eventQPS, eventBurst},
		{&out.Heartbeat, -1, 0}, // a negative QPS: no client-side limit
	} {
		cfg := rest.CopyConfig(rc)
		cfg.QPS, cfg.Burst = cl.qps, cl.burst
		if *cl.into, err = kubernetes.NewForConfig(cfg); err != nil {
			return nil, fmt.Errorf("kubeconfig %s: %w", c.Kubeconfig, err)
		}
	}
	return &out, nil
}

func loadKubeconfig(path string) (*rest.Config, error) {
	rc, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		return nil, fmt.Errorf("kubeconfig %s: %w", path, err)
	}
	return rc, nil
}
